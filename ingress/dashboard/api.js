// The public API as the dashboard calls it: every request stamped in this browser.
import { apiKeyStamp } from "./stamp.js";

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export async function post(path, data, stamper) {
  const body = JSON.stringify(data);
  const [name, value] = await stamper(body);
  const response = await fetch(path, { method: "POST", body,
    headers: { "Content-Type": "application/json", [name]: value } });
  const payload = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(response.status, payload);
  return payload;
}

export class Api {
  constructor(session) {
    this.session = session; // {key, organizationId, userId}
  }

  stamper() {
    return (body) => apiKeyStamp(this.session.key, body);
  }

  query(name, extra = {}) {
    return post(`/public/v1/query/${name}`,
      { organizationId: this.session.organizationId, ...extra }, this.stamper());
  }

  /** The query names this deployment serves (its OpenAPI document, read once). */
  async served() {
    if (!Api.servedQueries) {
      Api.servedQueries = fetch("/public/v1/openapi.json").then((r) => r.json()).then((doc) =>
        new Set([...Object.keys(doc.paths || {}), ...(doc["x-walletd-undocumented-operations"] || [])]
          .filter((p) => p.startsWith("/public/v1/query/")).map((p) => p.slice("/public/v1/query/".length))))
        .catch(() => new Set());
    }
    return Api.servedQueries;
  }

  /** Every item of a paginated list query (pages of 100 by cursor, at most `cap` items). */
  async all(name, listKey, idKey, extra = {}, cap = 10000) {
    const items = [];
    let after;
    for (;;) {
      const page = (await this.query(name, { ...extra,
        paginationOptions: { limit: "100", ...(after ? { after } : {}) } }))[listKey] || [];
      items.push(...page);
      if (page.length < 100 || items.length >= cap) return items;
      after = page[page.length - 1][idKey];
    }
  }

  /** Follow an activity a busy deployment answered PENDING until it settles (or 30 s). */
  async settle(activity, timeoutMs = 30000) {
    const deadline = Date.now() + timeoutMs;
    let current = activity;
    while (current.status === "ACTIVITY_STATUS_PENDING" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 400));
      current = (await this.query("get_activity", { activityId: current.id })).activity;
    }
    return current;
  }

  async submit(name, type, parameters) {
    const answer = await post(`/public/v1/submit/${name}`, {
      type, timestampMs: String(Date.now()), organizationId: this.session.organizationId,
      parameters }, this.stamper());
    const activity = await this.settle(answer.activity);
    if (activity.status !== "ACTIVITY_STATUS_COMPLETED") {
      return { activity, result: null };
    }
    return { activity, result: Object.values(activity.result || {})[0] || {} };
  }
}
