"""Captcha for the paths bots abuse (``otp_init``, ``otp_init_v2``, ``signup``, ``signup_v2``).

A configuration with ``captchaEnabled`` makes the proxy check the browser's
``X-Captcha-Token`` (what ``@turnkey/core`` sends) with the operator's hCaptcha / Cloudflare
Turnstile ``siteverify`` endpoint (``WALLETD_CAPTCHA_VERIFY_URL``, ``WALLETD_CAPTCHA_SECRET``):
a form POST of ``secret``, ``response`` and ``remoteip`` answered by ``{"success": true}``.
Fails closed: without a verifier, or when it cannot be reached, the request is refused.
``update_auth_proxy_config`` refuses ``captchaEnabled: true`` where no verifier is
configured, so the setting is never stored without being enforced.
"""

from __future__ import annotations

from typing import Final

import requests

from infra.errors import PermissionDenied, Unavailable

PATHS: Final = frozenset({"otp_init", "otp_init_v2", "signup", "signup_v2"})
HEADER: Final = "X-Captcha-Token"
TIMEOUT_S: Final = 5.0
MAX_TOKEN_LENGTH: Final = 8192


class CaptchaVerifier:
    """The operator's ``siteverify`` endpoint."""

    def __init__(self, url: str, secret: str) -> None:
        self.url = url
        self.secret = secret

    def check(self, token: str | None, remote_ip: str) -> None:
        """Refuse unless ``token`` verifies.

        Raises:
            PermissionDenied: no token, or the verifier says it is not valid.
            Unavailable: no verifier configured, or it could not be asked.
        """
        if not self.url:
            raise Unavailable("captcha is enabled for this auth proxy but no verifier is "
                              "configured (WALLETD_CAPTCHA_VERIFY_URL)")
        if not token or len(token) > MAX_TOKEN_LENGTH:
            raise PermissionDenied(f"this auth proxy requires a captcha: send the widget's "
                                   f"token in {HEADER}")
        try:
            answer = requests.post(self.url, data={"secret": self.secret, "response": token,
                                                   "remoteip": remote_ip},
                                   timeout=TIMEOUT_S, allow_redirects=False)
            verdict = answer.json() if answer.status_code == 200 else {}
        except (requests.RequestException, ValueError):
            raise Unavailable("the captcha verifier could not be reached; retry shortly") \
                from None
        if not isinstance(verdict, dict) or verdict.get("success") is not True:
            raise PermissionDenied("the captcha did not verify; solve it again")
