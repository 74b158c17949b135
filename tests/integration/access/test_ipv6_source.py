"""An IP allow-list against a real IPv6 source address (::1), through the official client.

The shipped servers of the e2e deployments listen on IPv4 loopback; here the ingress app
itself (``ingress.app.create_app``, the embedded composition over SQLite with its worker
threads, as ``walletd up`` builds it) is served on ``[::1]`` so the client's source address is
the IPv6 loopback, with no forwarded header involved.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest
from turnkey_api_key_stamper import ApiKeyStamper, ApiKeyStamperConfig
from turnkey_http import TurnkeyClient
from turnkey_http.generated.client import TurnkeyNetworkError
from turnkey_sdk_types import GetWhoamiBody, SetIpAllowlistBody

from infra.bootstrap import bootstrap
from infra.messaging import queues
from ingress.app import create_app
from tests.support.in_process import running


class _Server6(WSGIServer):
    address_family = socket.AF_INET6


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def client6(tmp_path: Path) -> Iterator[TurnkeyClient]:
    with running(None, tmp_path, queues.ALL) as deployment:
        services = deployment.services
        app = create_app(bootstrap(services.settings, "ingress", broker=services.broker))
        httpd = make_server("::1", 0, app, server_class=_Server6, handler_class=_Quiet)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        root = deployment.root
        stamper = ApiKeyStamper(ApiKeyStamperConfig(root["apiPublicKey"],
                                                    root["apiPrivateKey"]))
        try:
            yield TurnkeyClient(base_url=f"http://[::1]:{httpd.server_address[1]}",
                                stamper=stamper, organization_id=root["organizationId"])
        finally:
            httpd.shutdown()
            httpd.server_close()


def test_an_ipv6_source_address_is_allowed_and_refused_by_its_rules(client6: TurnkeyClient) -> None:
    assert client6.get_whoami(GetWhoamiBody()).userId
    client6.set_ip_allowlist(SetIpAllowlistBody(enabled=True, rules=[{"cidr": "::1/128"}]))
    assert client6.get_whoami(GetWhoamiBody()).userId  # ::1 is listed
    client6.set_ip_allowlist(SetIpAllowlistBody(enabled=True, rules=[{"cidr": "2001:db8::/32"},
                                                                     {"cidr": "127.0.0.1/32"}]))
    with pytest.raises(TurnkeyNetworkError) as caught:
        client6.get_whoami(GetWhoamiBody())
    assert caught.value.status_code == 403 and "from ::1" in str(caught.value)
