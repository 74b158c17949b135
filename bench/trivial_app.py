"""The floor: a trivial Falcon endpoint served by the same gunicorn configuration."""

from __future__ import annotations

import falcon


class Echo:
    """Reads the body and answers a tiny JSON document, nothing else."""

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.bounded_stream.read()
        resp.media = {"ok": True}


app = falcon.App()
app.add_route("/trivial", Echo())
