"""docs/DEVELOPING.md's "new activity" recipe, followed to the letter, gives an activity that
``activity.resource`` policies decide.

The recipe is one module, ``infra/activities/<verb_noun>.py`` with ``Params``, ``execute`` and
``SPEC = ActivitySpec(..., resource=..., action=...)``, autodiscovered. This test writes such a
module for a toy activity (``delete_tvc_deployment``: a type Turnkey's clients know, its
documented pair ``TVC_DEPLOYMENT`` / ``DELETE``, which walletd does not serve and no table of
the policy layer names) into a directory of its
own, runs a real ``walletd up`` whose ``infra.activities`` package also looks there (so the
toy is registered in this test's deployment only), and submits the toy through the official
``turnkey-http`` client as a user who is not the root quorum: denied with no policy, allowed
by a policy on its ``activity.resource`` / ``activity.action``, denied again by a DENY on them.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from turnkey_http.generated.client import TurnkeyNetworkError
from turnkey_sdk_types import (
    CreatePolicyBody,
    CreateUsersBody,
    DeletePolicyBody,
    GetActivityResponse,
    GetPolicyEvaluationsBody,
    RequestType,
    SignedRequest,
)

from tests.support.deployment import Deployment, Key, _env, _read_key
from tests.support.keys import make_key
from tests.support.ports import free_port

TOY_TYPE = "ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT"

#: The recipe's one module (docs/DEVELOPING.md "Adding an activity type").
TOY_MODULE = '''"""``delete_tvc_deployment``: a toy activity of tests/e2e/test_new_activity_recipe.py."""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.errors import InvalidRequest
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteTvcDeploymentIntent``."""

    deployment_id: str


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    if not params.deployment_id.startswith("dep-"):
        raise InvalidRequest("deploymentId must start with dep-: send a deployment's id")
    return {"deploymentId": params.deployment_id}


SPEC = ActivitySpec(
    path="delete_tvc_deployment",
    versions=(Version("ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT", Params,
                      "deleteTvcDeploymentIntent", "deleteTvcDeploymentResult"),),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="TVC_DEPLOYMENT",
    action="DELETE",
)
'''

#: ``walletd up`` whose activity registry also discovers the modules of one more directory.
LAUNCH = ("import sys, infra.activities as found; found.__path__.append(sys.argv.pop(1)); "
          "from walletd.cli import main; sys.exit(main())")


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    workdir = tmp_path_factory.mktemp("toy-activity")
    modules = workdir / "activities"
    modules.mkdir()
    (modules / "delete_tvc_deployment.py").write_text(TOY_MODULE)
    port, data = free_port(), workdir / "data"
    env = _env({"WALLETD_DATA_DIR": str(data), "WALLETD_PORT": str(port),
                "WALLETD_BROKER_URL": "memory://", "WALLETD_AUTH_PROXY_PORT": str(free_port())})
    dep = Deployment(f"http://127.0.0.1:{port}", Key("", "", "", ""), env, workdir)
    dep._spawn("up", [sys.executable, "-c", LAUNCH, str(modules), "up", "--data-dir", str(data),
                      "--port", str(port)])
    dep._ready_or_stop()
    dep.root = _read_key(data / "root-api-key.json")
    yield dep
    dep.stop()


def _user(dep: Deployment, name: str) -> Key:
    key = make_key()
    created = dep.client().create_users(CreateUsersBody(users=[{
        "userName": name, "apiKeys": [key.api_key_params()], "authenticators": [],
        "oauthProviders": [], "userTags": []}]))
    return Key(dep.root.organization_id, created.userIds[0], key.public_key, key.private_key)


def _submit_toy(dep: Deployment, key: Key, deployment_id: str) -> Any:
    """The toy, stamped and sent by ``turnkey-http`` (which has no method for it: its generic
    ``send_signed_request``), polled by it until it settles."""
    client = dep.client(key)
    body = client._serialize_body({
        "type": TOY_TYPE, "timestampMs": str(time.time_ns() // 1_000_000),
        "organizationId": key.organization_id, "parameters": {"deploymentId": deployment_id}})
    signed = SignedRequest(url=f"{dep.base_url}/public/v1/submit/delete_tvc_deployment",
                           body=body, stamp=client.stamper.stamp(body), type=RequestType.ACTIVITY)
    return client.send_signed_request(signed, GetActivityResponse).activity


def _denied(dep: Deployment, key: Key, how: str) -> None:
    with pytest.raises(TurnkeyNetworkError) as refused:
        _submit_toy(dep, key, "dep-1")
    assert refused.value.status_code == 403
    # The wire error body {code, message, details}, as the client keeps it.
    assert json.loads(str(refused.value.cause)) == {
        "code": 7, "message": f"policy engine denied request {how}", "details": []}


def test_a_policy_on_the_new_activitys_resource_decides_it(toy: Deployment) -> None:
    alice = _user(toy, "alice")
    # No policy names it: a user outside the root quorum is denied (implicitly).
    _denied(toy, alice, "implicitly")

    on_resource = "activity.resource == 'TVC_DEPLOYMENT' && activity.action == 'DELETE'"
    allow = toy.client().create_policy(CreatePolicyBody(
        policyName="alice deletes deployments", effect="EFFECT_ALLOW", notes="",
        condition=on_resource, consensus=f"approvers.any(user, user.id == '{alice.user_id}')"))
    done = _submit_toy(toy, alice, "dep-1")
    assert done.status.value == "ACTIVITY_STATUS_COMPLETED"
    assert done.type.value == TOY_TYPE
    assert done.intent.deleteTvcDeploymentIntent.deploymentId == "dep-1"
    assert done.result.deleteTvcDeploymentResult.deploymentId == "dep-1"
    runs = toy.client(alice).get_policy_evaluations(
        GetPolicyEvaluationsBody(activityId=done.id)).policyEvaluations
    assert [(p.policyId, p.outcome.value) for p in runs[-1].policyEvaluations] == \
        [(allow.policyId, "OUTCOME_ALLOW")]

    # The handler's own refusal (an infra.errors class) reaches the client as the wire error.
    with pytest.raises(TurnkeyNetworkError) as failed:
        _submit_toy(toy, alice, "1")
    assert failed.value.status_code == 400
    assert json.loads(str(failed.value.cause))["message"] == \
        "deploymentId must start with dep-: send a deployment's id"

    deny = toy.client().create_policy(CreatePolicyBody(
        policyName="nobody deletes deployments", effect="EFFECT_DENY", notes="",
        condition=on_resource))
    _denied(toy, alice, "explicitly")

    toy.client().delete_policy(DeletePolicyBody(policyId=deny.policyId))
    toy.client().delete_policy(DeletePolicyBody(policyId=allow.policyId))
    _denied(toy, alice, "implicitly")


def test_the_toy_is_served_by_this_deployment_alone(toy: Deployment) -> None:
    """The toy module lives outside the source tree: the source's registry does not know it,
    the toy deployment routes its path as it routes a served one, and a type it does not
    serve as unknown."""
    from infra.activities import registry

    assert TOY_TYPE not in registry().by_type
    assert not (Path(__file__).resolve().parents[2] / "infra" / "activities" /
                "delete_tvc_deployment.py").exists()
    toy_path = toy.post("/public/v1/submit/delete_tvc_deployment", "{}")
    served = toy.post("/public/v1/submit/create_wallet", "{}")
    unserved = toy.post("/public/v1/submit/delete_tvc_app_and_deployments", "{}")
    assert (toy_path.status_code, toy_path.json()) == (served.status_code, served.json())
    assert unserved.status_code != served.status_code or unserved.json() != served.json()
