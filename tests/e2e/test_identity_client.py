"""The official ``turnkey-http`` client drives every identity activity and query: requests
are built by the client and every response must parse into its pydantic models.
"""

from __future__ import annotations

import json

import pytest
from turnkey_sdk_types import (
    CreateAuthenticatorsBody,
    CreateInvitationsBody,
    CreateOauthProvidersBody,
    CreateSmartContractInterfaceBody,
    CreateUsersBody,
    CreateUserTagBody,
    DeleteAuthenticatorsBody,
    DeleteInvitationBody,
    DeleteSubOrganizationBody,
    DeleteUsersBody,
    DeleteUserTagsBody,
    GetAuthenticatorBody,
    GetAuthenticatorsBody,
    GetOauthProvidersBody,
    GetOrganizationConfigsBody,
    GetSmartContractInterfaceBody,
    GetSmartContractInterfacesBody,
    GetSubOrgIdsBody,
    ListPrivateKeyTagsBody,
    ListUserTagsBody,
    RecoverUserBody,
    RemoveOrganizationFeatureBody,
    SetOrganizationFeatureBody,
    UpdateUserBody,
    UpdateUserEmailBody,
    UpdateUserPhoneNumberBody,
    UpdateUserTagBody,
)

from tests.support.deployment import Deployment, Key, make_organization
from tests.support.keys import make_key
from tests.support.raw_api import root_user_params
from tests.support.soft_authenticator import SoftAuthenticator


@pytest.fixture
def org(deployment: Deployment) -> Key:
    return make_organization(deployment, "client org")


def test_passkey_activities_and_queries(deployment: Deployment, org: Key) -> None:
    client = deployment.client(org)
    passkey = SoftAuthenticator()
    created = client.create_authenticators(CreateAuthenticatorsBody(
        userId=org.user_id, authenticators=[passkey.registration("laptop", fmt="packed")]))
    (authenticator_id,) = created.authenticatorIds
    one = client.get_authenticator(GetAuthenticatorBody(authenticatorId=authenticator_id))
    assert one.authenticator.credentialId == passkey.credential_id_b64
    many = client.get_authenticators(GetAuthenticatorsBody(userId=org.user_id))
    assert [a.authenticatorId for a in many.authenticators] == [authenticator_id]
    recovered = client.recover_user(RecoverUserBody(
        userId=org.user_id, authenticator=SoftAuthenticator(algorithm="RS256").registration()))
    assert len(recovered.authenticatorId) == 1
    deleted = client.delete_authenticators(DeleteAuthenticatorsBody(
        userId=org.user_id, authenticatorIds=[authenticator_id]))
    assert deleted.authenticatorIds == [authenticator_id]


def test_user_activities(deployment: Deployment, org: Key) -> None:
    client = deployment.client(org)
    created = client.create_users(CreateUsersBody(users=[{
        "userName": "ivy", "apiKeys": [make_key().api_key_params()], "authenticators": [],
        "oauthProviders": [], "userTags": []}]))
    user_id = created.userIds[0]
    tag = client.create_user_tag(CreateUserTagBody(userTagName="team", userIds=[user_id]))
    client.update_user_tag(UpdateUserTagBody(userTagId=tag.userTagId, newUserTagName="crew",
                                             addUserIds=[], removeUserIds=[]))
    assert [t.tagName for t in client.list_user_tags(ListUserTagsBody()).userTags] == ["crew"]
    assert client.update_user(UpdateUserBody(userId=user_id, userName="ivy2")).userId == user_id
    client.update_user_email(UpdateUserEmailBody(userId=user_id, userEmail="ivy@example.com"))
    client.update_user_phone_number(UpdateUserPhoneNumberBody(
        userId=user_id, userPhoneNumber="+14155550123"))
    providers = client.create_oauth_providers(CreateOauthProvidersBody(
        userId=user_id, oauthProviders=[{"providerName": "p", "oidcClaims": {
            "iss": "https://i.example", "sub": "1", "aud": "a"}}]))
    listed = client.get_oauth_providers(GetOauthProvidersBody(userId=user_id)).oauthProviders
    assert [p.providerId for p in listed] == providers.providerIds
    removed = client.delete_user_tags(DeleteUserTagsBody(userTagIds=[tag.userTagId]))
    assert removed.userIds == [user_id]
    assert client.delete_users(DeleteUsersBody(userIds=[user_id])).userIds == [user_id]
    assert client.list_private_key_tags(ListPrivateKeyTagsBody()).privateKeyTags == []


def test_organization_activities_and_queries(deployment: Deployment, org: Key) -> None:
    client = deployment.client(org)
    features = client.set_organization_feature(SetOrganizationFeatureBody(
        name="FEATURE_NAME_WEBHOOK", value="https://hooks.example/x")).features
    assert [(f.name.value if hasattr(f.name, "value") else f.name, f.value)
            for f in features] == [("FEATURE_NAME_WEBHOOK", "https://hooks.example/x")]
    configs = client.get_organization_configs(GetOrganizationConfigsBody()).configs
    assert configs.quorum.threshold == 1
    client.remove_organization_feature(RemoveOrganizationFeatureBody(name="FEATURE_NAME_WEBHOOK"))
    invitation = client.create_invitations(CreateInvitationsBody(invitations=[{
        "receiverUserName": "jo", "receiverUserEmail": "jo@example.com", "receiverUserTags": [],
        "accessType": "ACCESS_TYPE_API", "senderUserId": org.user_id}]))
    client.delete_invitation(DeleteInvitationBody(invitationId=invitation.invitationIds[0]))
    sci = client.create_smart_contract_interface(CreateSmartContractInterfaceBody(
        smartContractAddress="0x" + "12" * 20, type="SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM",
        label="erc20", smartContractInterface=json.dumps([{"type": "function", "name": "f",
                                                           "inputs": [], "outputs": []}])))
    got = client.get_smart_contract_interface(GetSmartContractInterfaceBody(
        smartContractInterfaceId=sci.smartContractInterfaceId))
    assert got.smartContractInterface.label == "erc20"
    listed = client.get_smart_contract_interfaces(GetSmartContractInterfacesBody())
    assert len(listed.smartContractInterfaces) == 1


def test_sub_organization_lifecycle_with_the_client(deployment: Deployment, org: Key) -> None:
    from turnkey_sdk_types import CreateSubOrganizationBody

    key = make_key()
    created = deployment.client(org).create_sub_organization(CreateSubOrganizationBody(
        subOrganizationName="client child", rootUsers=[root_user_params("child root", key)],
        rootQuorumThreshold=1))
    sub_id = created.subOrganizationId
    ids = deployment.client(org).get_sub_org_ids(GetSubOrgIdsBody(
        filterType="NAME", filterValue="client child")).organizationIds
    assert ids == [sub_id]
    child = Key(sub_id, created.rootUserIds[0], key.public_key, key.private_key)
    deleted = deployment.client(child).delete_sub_organization(
        DeleteSubOrganizationBody(deleteWithoutExport=True))
    assert deleted.subOrganizationUuid == sub_id
