// The official @turnkey/core helpers that fetch an auth proxy's wallet kit settings
// (getAuthProxyConfig, getClientParams: both POST with no body), run against walletd's proxy.
// stdin: {"url": <proxy url>, "configId": <config id>}; stdout: one JSON line.
import { getAuthProxyConfig, getClientParams } from "@turnkey/core";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { url, configId } = JSON.parse(input);
const out = {};
try {
  out.config = await getAuthProxyConfig(configId, url);
  out.clientParams = await getClientParams(configId, url);
} catch (e) {
  out.error = String(e && e.message ? e.message : e);
}
console.log(JSON.stringify(out));
