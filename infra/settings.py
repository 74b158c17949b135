"""Typed settings, read once from the environment.

``Settings.from_env()`` is the only reader of ``WALLETD_*`` variables; every other module
receives the settings object. The ingress role gets settings *without* the master-key
location (see :meth:`Settings.for_role`), so that process cannot load key material.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from infra.messaging import queues

Role = Literal["ingress", "worker", "embedded", "cli"]


def _int(env: dict[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as ex:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from ex


def _list(env: dict[str, str], name: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
    raw = env.get(name)
    if raw is None:
        return default
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def _chain_rpc(raw: str) -> tuple[tuple[str, str], ...]:
    """``caip2=url`` pairs, comma-separated (a CAIP-2 id holds one ``:``, a URL none of ``,``).

    Raises:
        ValueError: an entry without ``=``.
    """
    pairs = []
    for entry in (part.strip() for part in raw.split(",")):
        if not entry:
            continue
        caip2, sep, url = entry.partition("=")
        if not sep or not caip2.strip() or not url.strip():
            raise ValueError(f"WALLETD_CHAIN_RPC entries are caip2=url, got {entry!r}")
        pairs.append((caip2.strip(), url.strip()))
    return tuple(pairs)


#: Issuers of Google, Apple and Facebook ID tokens.
DEFAULT_OIDC_ISSUERS = ("https://accounts.google.com", "https://appleid.apple.com",
                        "https://www.facebook.com")
#: ``WALLETD_OAUTH2_<NAME>`` variables naming OAuth 2.0 provider endpoints.
OAUTH2_ENDPOINT_NAMES = ("X_TOKEN_URL", "X_USERINFO_URL", "DISCORD_TOKEN_URL",
                         "DISCORD_USERINFO_URL")


def _float(env: dict[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError as ex:
        raise ValueError(f"{name} must be a number, got {raw!r}") from ex


def _within(name: str, value: float, low: float, high: float) -> float:
    """``value`` when ``low <= value <= high``; otherwise a startup error naming ``name``."""
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low:g} and {high:g}, got {value:g}")
    return value


def _log_format(raw: str) -> Literal["text", "json"]:
    if raw in ("text", "json"):
        return raw  # type: ignore[return-value]
    raise ValueError(f"WALLETD_LOG_FORMAT must be text or json, got {raw!r}")


@dataclass(frozen=True)
class Settings:
    """Everything configurable about a walletd process.

    Attributes:
        data_dir: Where the embedded database, master keys and root API key file live.
        database_url: SQLAlchemy URL; empty means SQLite under ``data_dir``.
        broker_url: ``amqp://…`` (RabbitMQ), ``redis://…`` or ``memory://`` (in-process).
        host: Address the HTTP server binds to.
        port: Port the public API listens on.
        sync_wait_ms: How long a submit waits for its activity to finish before answering
            PENDING (the "optimistically synchronous" window).
        http_workers: gunicorn worker processes for ``walletd ingress``.
        http_threads: threads per gunicorn worker.
        worker_processes / worker_threads: dramatiq pool sizes for ``walletd worker``.
        queue_threads: per-queue thread counts (``WALLETD_WORKER_THREADS_<QUEUE>``); a queue
            not listed gets ``worker_threads``. Every queue has its own pool.
        master_key_file: Path of the versioned master keys. Empty for the ingress role.
        webhook_allow: Hosts/CIDRs that webhooks may reach over plain http or private IPs.
        base_url: The public URL clients use (written into root-api-key.json).
        sweep_interval_s: How often workers re-enqueue activities stuck in PENDING.
        sweep_grace_s: How long an activity may sit PENDING since its last hand-off before
            the sweeper assumes its message was lost and re-sends it.
        audit_checkpoint_interval_s: How often the consensus pool's worker appends staged
            audit-log leaves and signs a checkpoint (``infra.audit``).
        auth_proxy_port: Port of the auth proxy (0: the API port + 1).
        api_url: The public API's URL as the auth proxy reaches it (empty: ``base_url``).
        auth_proxy_key_file: The auth proxy's own key (empty: ``<data dir>/auth-proxy-key.json``).
        auth_proxy_public_key: Its public half, for hosts without the file (uncompressed hex).
        auth_proxy_config_ttl_s: How long the proxy keeps a configuration before reading it
            again.
        auth_proxy_rate_address: Requests per minute one client address may make to the proxy.
        auth_proxy_rate_contact: OTP initiations one contact may receive per 3 minutes.
        oidc_issuers: OIDC issuer URLs whose ID tokens logins accept (``WALLETD_OIDC_ISSUERS``).
        oidc_allow: Hosts/CIDRs that OIDC discovery, JWKS and OAuth 2.0 token requests may
            reach over plain http or private addresses (``WALLETD_OIDC_ALLOW``).
        oauth2_endpoints: ``(name, url)`` overrides of the OAuth 2.0 providers' token and
            user endpoints (``WALLETD_OAUTH2_<PROVIDER>_{TOKEN,USERINFO}_URL``).
        rate_limit_url: Where rate-limit state lives (``WALLETD_RATE_LIMIT_URL``):
            ``redis://…`` (shared by every ingress process) or ``memory://`` (one process).
            Empty: the broker's Redis when the broker is Redis, else ``memory://``; see
            :attr:`effective_rate_limit_url`.
        smtp_url: ``smtp://[user:pass@]host:port[?starttls=true]`` or ``smtps://…`` for
            one-time codes and links (``WALLETD_SMTP_URL``; empty: write to the outbox dir).
        email_from: Default sender address (``WALLETD_EMAIL_FROM``).
        sms_url / sms_account_sid / sms_auth_token / sms_from: A Twilio-compatible REST API
            (``WALLETD_SMS_URL``, ``_ACCOUNT_SID``, ``_AUTH_TOKEN``, ``_FROM``; empty URL:
            write to the outbox dir).
        rate_limit_address_rps / rate_limit_organization_rps / rate_limit_sub_organization_rps:
            Requests per second allowed per client address, per organization (with all of
            its sub-organizations) and per sub-organization (``WALLETD_RATE_LIMIT_*_RPS``;
            0 turns a limit off; fractions allowed). The address limit counts every request;
            the organization limits count only authenticated ones (docs/SECURITY.md). Defaults
            (1000 / 3000 / 1500) sit far above what the test suite and the benchmarks send,
            and each organization limit above the address limit, so one address cannot use
            up a sub-organization's or an organization's budget.
        rate_limit_burst_s: The window the limits are counted over: up to ``rps * burst_s``
            requests may arrive at once (``WALLETD_RATE_LIMIT_BURST_S``).
        rate_limit_forwarded_hops: Proxies in front of the ingress that append to
            ``X-Forwarded-For`` (``WALLETD_RATE_LIMIT_FORWARDED_HOPS``); 0 uses the socket's
            peer address. Only trust as many hops as you run: clients can forge the rest.
        log_format: ``text`` or ``json`` (one object per line carrying the request,
            activity and organization ids of the work being done).
        metrics_port: Port of a worker role's ``/metrics``, ``/health`` and ``/ready``
            (0: none). The ingress and ``walletd up`` serve them on the API port.
        metrics_token: ``WALLETD_METRICS_TOKEN``: with it, ``/metrics`` on the API port
            answers only ``Authorization: Bearer <token>``; without it, only loopback peers.
        captcha_verify_url / captcha_secret: an hCaptcha / Turnstile ``siteverify`` endpoint
            and its secret (``WALLETD_CAPTCHA_VERIFY_URL``, ``WALLETD_CAPTCHA_SECRET``): the
            auth proxy checks ``X-Captcha-Token`` there for configurations with
            ``captchaEnabled``, which cannot be switched on without them.
        webauthn_require_uv: ``WALLETD_WEBAUTHN_REQUIRE_UV=true``: passkey stamps must carry
            the user-verified flag (no wire field states an organization's own requirement).
        shutdown_timeout_s: On SIGTERM, how long in-flight requests and messages may run
            before the process exits anyway (unfinished messages are redelivered).
        keyring_file: The sealed keyring (``WALLETD_KEYRING_FILE``; empty:
            ``<data dir>/keyring.sealed``), see docs/CUSTODY.md.
        seal_env: ``WALLETD_SEAL`` and every ``WALLETD_SEAL_*`` variable, as given (parsed by
            ``infra.seal.config``); empty for the ingress role.
        seal_default: The seal type when neither ``WALLETD_SEAL`` nor the sealed keyring
            names one: ``static`` for in-process use and ``walletd up``, ``shamir`` for the
            production commands.
        chain_rpc: ``(caip2, JSON-RPC URL)`` of every chain walletd may broadcast to
            (``WALLETD_CHAIN_RPC=eip155:1=https://…,solana:…=https://…``).
        chain_allow: Hosts/CIDRs chain RPC may reach over plain http or private addresses
            (``WALLETD_CHAIN_ALLOW``; otherwise public https only, as for webhooks).
        broadcast_poll_ms: How often signing workers look for transactions to broadcast or
            follow (``WALLETD_BROADCAST_POLL_MS``).
        broadcast_stuck_s: How long a broadcast transaction may stay unincluded before it is
            replaced with higher fees (``WALLETD_BROADCAST_STUCK_S``).
        broadcast_lease_s: How long a tracker holds a transaction for one step; a tracker
            that dies mid-step leaves it to another after this (``WALLETD_BROADCAST_LEASE_S``).
        broadcast_max_replacements: How many times a stuck transaction may be re-signed with
            higher fees before it is given up (``WALLETD_BROADCAST_MAX_REPLACEMENTS``, 0 to 100).
        broadcast_fee_cap_multiple: A replacement's ``maxFeePerGas`` / ``maxPriorityFeePerGas``
            never exceed this multiple of the first signature's
            (``WALLETD_BROADCAST_FEE_CAP_MULTIPLE``, 1 to 100).
        broadcast_suggested_fee_max_gwei: Fees a node suggests above this many gwei per gas
            are not used (``WALLETD_BROADCAST_SUGGESTED_FEE_MAX_GWEI``, > 0).
    """

    data_dir: Path = Path("./data")
    database_url: str = ""
    broker_url: str = "memory://"
    host: str = "127.0.0.1"
    port: int = 8080
    sync_wait_ms: int = 5000
    http_workers: int = 2
    http_threads: int = 8
    worker_processes: int = 1
    worker_threads: int = 8
    queue_threads: tuple[tuple[str, int], ...] = ()
    master_key_file: str = ""
    webhook_allow: tuple[str, ...] = field(default_factory=tuple)
    base_url: str = ""
    sweep_interval_s: int = 10
    sweep_grace_s: int = 60
    audit_checkpoint_interval_s: float = 2.0
    log_level: str = "INFO"
    auth_proxy_port: int = 0
    api_url: str = ""
    auth_proxy_key_file: str = ""
    auth_proxy_public_key: str = ""
    auth_proxy_config_ttl_s: int = 5
    auth_proxy_rate_address: int = 120
    auth_proxy_rate_contact: int = 3
    oidc_issuers: tuple[str, ...] = DEFAULT_OIDC_ISSUERS
    oidc_allow: tuple[str, ...] = ()
    oauth2_endpoints: tuple[tuple[str, str], ...] = ()
    rate_limit_url: str = ""
    smtp_url: str = field(default="", repr=False)
    email_from: str = "walletd <no-reply@localhost>"
    sms_url: str = ""
    sms_account_sid: str = ""
    sms_auth_token: str = field(default="", repr=False)
    sms_from: str = ""
    rate_limit_address_rps: float = 1000
    rate_limit_organization_rps: float = 3000
    rate_limit_sub_organization_rps: float = 1500
    rate_limit_burst_s: int = 10
    rate_limit_forwarded_hops: int = 0
    log_format: Literal["text", "json"] = "text"
    metrics_port: int = 0
    metrics_token: str = field(default="", repr=False)
    captcha_verify_url: str = ""
    webauthn_require_uv: bool = False
    captcha_secret: str = field(default="", repr=False)
    shutdown_timeout_s: int = 30
    keyring_file: str = ""
    seal_env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    seal_default: str = "static"
    chain_rpc: tuple[tuple[str, str], ...] = ()
    chain_allow: tuple[str, ...] = ()
    broadcast_poll_ms: int = 500
    broadcast_stuck_s: int = 30
    broadcast_lease_s: int = 60
    broadcast_max_replacements: int = 5
    broadcast_fee_cap_multiple: float = 3.0
    broadcast_suggested_fee_max_gwei: float = 1000.0

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        """Build settings from ``WALLETD_*`` environment variables."""
        e = dict(os.environ if env is None else env)
        data_dir = Path(e.get("WALLETD_DATA_DIR", "./data"))
        allow = tuple(h.strip() for h in e.get("WALLETD_WEBHOOK_ALLOW", "").split(",") if h.strip())
        port = _int(e, "WALLETD_PORT", 8080)
        host = e.get("WALLETD_HOST", "127.0.0.1")
        return cls(
            data_dir=data_dir,
            database_url=e.get("WALLETD_DATABASE_URL", ""),
            broker_url=e.get("WALLETD_BROKER_URL", "memory://"),
            host=host,
            port=port,
            sync_wait_ms=_int(e, "WALLETD_SYNC_WAIT_MS", 5000),
            http_workers=_int(e, "WALLETD_HTTP_WORKERS", 2),
            http_threads=_int(e, "WALLETD_HTTP_THREADS", 8),
            worker_processes=_int(e, "WALLETD_WORKER_PROCESSES", 1),
            worker_threads=_int(e, "WALLETD_WORKER_THREADS", 8),
            queue_threads=tuple(
                (q, _int(e, f"WALLETD_WORKER_THREADS_{q.upper()}", 0)) for q in queues.ALL
                if e.get(f"WALLETD_WORKER_THREADS_{q.upper()}")),
            master_key_file=e.get("WALLETD_MASTER_KEY_FILE", str(data_dir / "master-keys.json")),
            webhook_allow=allow,
            base_url=e.get("WALLETD_BASE_URL", ""),
            sweep_interval_s=_int(e, "WALLETD_SWEEP_INTERVAL_S", 10),
            sweep_grace_s=_int(e, "WALLETD_SWEEP_GRACE_S", 60),
            audit_checkpoint_interval_s=_float(e, "WALLETD_AUDIT_CHECKPOINT_INTERVAL_S", 2.0),
            log_level=e.get("WALLETD_LOG_LEVEL", "INFO"),
            auth_proxy_port=_int(e, "WALLETD_AUTH_PROXY_PORT", 0),
            api_url=e.get("WALLETD_API_URL", ""),
            auth_proxy_key_file=e.get("WALLETD_AUTH_PROXY_KEY_FILE", ""),
            auth_proxy_public_key=e.get("WALLETD_AUTH_PROXY_PUBLIC_KEY", ""),
            auth_proxy_config_ttl_s=_int(e, "WALLETD_AUTH_PROXY_CONFIG_TTL_S", 5),
            auth_proxy_rate_address=_int(e, "WALLETD_AUTH_PROXY_RATE_ADDRESS", 120),
            auth_proxy_rate_contact=_int(e, "WALLETD_AUTH_PROXY_RATE_CONTACT", 3),
            oidc_issuers=_list(e, "WALLETD_OIDC_ISSUERS", DEFAULT_OIDC_ISSUERS),
            oidc_allow=_list(e, "WALLETD_OIDC_ALLOW"),
            oauth2_endpoints=tuple((n, e[f"WALLETD_OAUTH2_{n}"]) for n in OAUTH2_ENDPOINT_NAMES
                                   if e.get(f"WALLETD_OAUTH2_{n}")),
            rate_limit_url=e.get("WALLETD_RATE_LIMIT_URL", ""),
            smtp_url=e.get("WALLETD_SMTP_URL", ""),
            email_from=e.get("WALLETD_EMAIL_FROM", "walletd <no-reply@localhost>"),
            sms_url=e.get("WALLETD_SMS_URL", ""),
            sms_account_sid=e.get("WALLETD_SMS_ACCOUNT_SID", ""),
            sms_auth_token=e.get("WALLETD_SMS_AUTH_TOKEN", ""),
            sms_from=e.get("WALLETD_SMS_FROM", ""),
            rate_limit_address_rps=_float(e, "WALLETD_RATE_LIMIT_ADDRESS_RPS", 1000),
            rate_limit_organization_rps=_float(e, "WALLETD_RATE_LIMIT_ORGANIZATION_RPS", 3000),
            rate_limit_sub_organization_rps=_float(e, "WALLETD_RATE_LIMIT_SUB_ORGANIZATION_RPS",
                                                   1500),
            rate_limit_burst_s=_int(e, "WALLETD_RATE_LIMIT_BURST_S", 10),
            rate_limit_forwarded_hops=_int(e, "WALLETD_RATE_LIMIT_FORWARDED_HOPS", 0),
            log_format=_log_format(e.get("WALLETD_LOG_FORMAT", "text")),
            metrics_port=_int(e, "WALLETD_METRICS_PORT", 0),
            metrics_token=e.get("WALLETD_METRICS_TOKEN", ""),
            captcha_verify_url=e.get("WALLETD_CAPTCHA_VERIFY_URL", ""),
            webauthn_require_uv=e.get("WALLETD_WEBAUTHN_REQUIRE_UV", "").lower() in ("1", "true"),
            captcha_secret=e.get("WALLETD_CAPTCHA_SECRET", ""),
            shutdown_timeout_s=_int(e, "WALLETD_SHUTDOWN_TIMEOUT_S", 30),
            keyring_file=e.get("WALLETD_KEYRING_FILE", ""),
            seal_env=tuple(sorted((k, v) for k, v in e.items()
                                  if k == "WALLETD_SEAL" or k.startswith("WALLETD_SEAL_"))),
            chain_rpc=_chain_rpc(e.get("WALLETD_CHAIN_RPC", "")),
            chain_allow=_list(e, "WALLETD_CHAIN_ALLOW"),
            broadcast_poll_ms=_int(e, "WALLETD_BROADCAST_POLL_MS", 500),
            broadcast_stuck_s=_int(e, "WALLETD_BROADCAST_STUCK_S", 30),
            broadcast_lease_s=_int(e, "WALLETD_BROADCAST_LEASE_S", 60),
            broadcast_max_replacements=int(_within(
                "WALLETD_BROADCAST_MAX_REPLACEMENTS",
                _int(e, "WALLETD_BROADCAST_MAX_REPLACEMENTS", 5), 0, 100)),
            broadcast_fee_cap_multiple=_within(
                "WALLETD_BROADCAST_FEE_CAP_MULTIPLE",
                _float(e, "WALLETD_BROADCAST_FEE_CAP_MULTIPLE", 3.0), 1, 100),
            broadcast_suggested_fee_max_gwei=_within(
                "WALLETD_BROADCAST_SUGGESTED_FEE_MAX_GWEI",
                _float(e, "WALLETD_BROADCAST_SUGGESTED_FEE_MAX_GWEI", 1000.0), 1e-9, 1e9),
        )

    def threads_for(self, queue: str) -> int:
        """The size of ``queue``'s own worker pool."""
        return max(1, dict(self.queue_threads).get(queue, self.worker_threads))

    def for_role(self, role: Role) -> Settings:
        """Settings as a process of ``role`` sees them.

        The ingress never holds the master key: its settings carry no key location (nor
        the mail and SMS credentials: only workers send).
        """
        if role == "ingress":
            return replace(self, master_key_file="", smtp_url="", sms_auth_token="", seal_env=())
        return self

    @property
    def effective_keyring_file(self) -> str:
        """The sealed keyring's path (the setting, else under the data dir)."""
        return self.keyring_file or str(self.data_dir / "keyring.sealed")

    @property
    def effective_database_url(self) -> str:
        """The database URL, defaulting to SQLite under the data dir."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'walletd.sqlite3').resolve()}"

    @property
    def effective_rate_limit_url(self) -> str:
        """Where rate-limit state lives: the setting, else the broker's Redis, else memory.

        With RabbitMQ and several ingress processes, set ``WALLETD_RATE_LIMIT_URL`` to a
        Redis: in memory, each process counts only its own requests.
        """
        if self.rate_limit_url:
            return self.rate_limit_url
        if self.broker_url.startswith(("redis://", "rediss://")):
            return self.broker_url
        return "memory://"

    @property
    def effective_base_url(self) -> str:
        """The base URL clients should use."""
        if self.base_url:
            return self.base_url.rstrip("/")
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}"

    @property
    def effective_auth_proxy_port(self) -> int:
        """The auth proxy's port (the API port + 1 unless set)."""
        return self.auth_proxy_port or self.port + 1

    @property
    def effective_auth_proxy_url(self) -> str:
        """The URL browsers reach the auth proxy at."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.effective_auth_proxy_port}"

    @property
    def effective_api_url(self) -> str:
        """The public API's URL as the auth proxy calls it."""
        return (self.api_url or self.effective_base_url).rstrip("/")
