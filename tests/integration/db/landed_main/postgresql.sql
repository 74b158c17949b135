SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;
CREATE FUNCTION public.walletd_activity_settled() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
        BEGIN
            IF NEW.status IN ('ACTIVITY_STATUS_COMPLETED', 'ACTIVITY_STATUS_FAILED', 'ACTIVITY_STATUS_REJECTED', 'ACTIVITY_STATUS_CONSENSUS_NEEDED')
               AND NEW.status IS DISTINCT FROM OLD.status THEN
                PERFORM pg_notify('walletd_activity_settled', NEW.id);
            END IF;
            RETURN NULL;
        END
        $$;
CREATE FUNCTION public.walletd_deliveries_due() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
        BEGIN
            PERFORM pg_notify('walletd_deliveries_due', '');
            RETURN NULL;
        END $$;
CREATE FUNCTION public.walletd_endpoints_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
        BEGIN
            IF TG_OP <> 'INSERT' THEN
                PERFORM pg_notify('walletd_endpoints_changed', OLD.organization_id);
            END IF;
            IF TG_OP <> 'DELETE' THEN
                PERFORM pg_notify('walletd_endpoints_changed', NEW.organization_id);
            END IF;
            RETURN NULL;
        END $$;
CREATE FUNCTION public.walletd_user_row_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
        BEGIN
            IF NEW.view_version IS NOT DISTINCT FROM OLD.view_version THEN
                NEW.view_version := floor(random() * 4611686018427387903)::bigint;
            END IF;
            RETURN NEW;
        END $$;
CREATE FUNCTION public.walletd_user_section_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
        BEGIN
            IF TG_OP <> 'INSERT' THEN
                UPDATE users SET view_version = floor(random() * 4611686018427387903)::bigint WHERE id = OLD.user_id;
            END IF;
            IF TG_OP = 'INSERT'
               OR (TG_OP = 'UPDATE' AND NEW.user_id IS DISTINCT FROM OLD.user_id) THEN
                UPDATE users SET view_version = floor(random() * 4611686018427387903)::bigint WHERE id = NEW.user_id;
            END IF;
            RETURN NULL;
        END $$;
SET default_tablespace = '';
SET default_table_access_method = heap;
CREATE TABLE public.activities (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    type character varying(128) NOT NULL,
    status character varying(64) NOT NULL,
    fingerprint character varying(80) NOT NULL,
    body text NOT NULL,
    timestamp_ms character varying(32) NOT NULL,
    intent json NOT NULL,
    result json NOT NULL,
    failure json,
    user_id character varying(36),
    version integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.alembic_version (
    version_num character varying(32) NOT NULL
);
CREATE TABLE public.api_keys (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    user_id character varying(36) NOT NULL,
    name character varying(256) NOT NULL,
    public_key character varying(160) NOT NULL,
    curve character varying(64) NOT NULL,
    credential_type character varying(64) NOT NULL,
    expiration_seconds character varying(32),
    expires_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.auth_proxy_configs (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    enabled boolean NOT NULL,
    user_id character varying(36) NOT NULL,
    api_public_key character varying(66) NOT NULL,
    api_private_key_sealed text NOT NULL,
    sealed_to character varying(130) NOT NULL,
    settings json NOT NULL,
    version integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.authenticators (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    user_id character varying(36) NOT NULL,
    name character varying(256) NOT NULL,
    credential_id character varying(1400) NOT NULL,
    public_key text NOT NULL,
    algorithm integer NOT NULL,
    aaguid character varying(64) NOT NULL,
    attestation_type character varying(32) NOT NULL,
    model character varying(128) NOT NULL,
    transports json NOT NULL,
    sign_count integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.deleted_organizations (
    organization_id character varying(36) NOT NULL,
    deleted_at timestamp with time zone NOT NULL
);
CREATE TABLE public.import_targets (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    user_id character varying(36) NOT NULL,
    kind character varying(32) NOT NULL,
    public_key character varying(160) NOT NULL,
    wrapped_key text NOT NULL,
    ciphertext text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.invitations (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    receiver_user_name character varying(256) NOT NULL,
    receiver_email character varying(320) NOT NULL,
    receiver_user_tags json NOT NULL,
    access_type character varying(32) NOT NULL,
    sender_user_id character varying(36) NOT NULL,
    status character varying(32) NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.oauth2_credentials (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    provider character varying(64) NOT NULL,
    client_id character varying(512) NOT NULL,
    encrypted_client_secret text NOT NULL,
    wrapped_key text NOT NULL,
    ciphertext text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.oauth_providers (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    user_id character varying(36) NOT NULL,
    name character varying(256) NOT NULL,
    issuer character varying(512) NOT NULL,
    audience character varying(512) NOT NULL,
    subject character varying(512) NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.oidc_token_uses (
    token_hash character varying(64) NOT NULL,
    usage character varying(16) NOT NULL,
    fingerprint character varying(80) NOT NULL,
    used_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL
);
CREATE TABLE public.organization_features (
    organization_id character varying(36) NOT NULL,
    name character varying(128) NOT NULL,
    value text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.organizations (
    id character varying(36) NOT NULL,
    name character varying(256) NOT NULL,
    parent_id character varying(36),
    root_quorum_threshold integer NOT NULL,
    version integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.otp_codes (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    purpose character varying(16) NOT NULL,
    otp_type character varying(32) NOT NULL,
    contact character varying(320) NOT NULL,
    user_id character varying(36),
    code_hash character varying(64) NOT NULL,
    key_version integer NOT NULL,
    alphanumeric boolean NOT NULL,
    attempts integer NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.policies (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    name character varying(256) NOT NULL,
    effect character varying(32) NOT NULL,
    condition text NOT NULL,
    consensus text NOT NULL,
    time_expression text NOT NULL,
    notes text NOT NULL,
    version integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.policy_evaluations (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    activity_id character varying(36) NOT NULL,
    vote_id character varying(36) NOT NULL,
    outcome character varying(40) NOT NULL,
    reason text NOT NULL,
    evaluations json NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.private_key_addresses (
    private_key_id character varying(36) NOT NULL,
    address_format character varying(64) NOT NULL,
    organization_id character varying(36) NOT NULL,
    address character varying(256) NOT NULL
);
CREATE TABLE public.private_keys (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    name character varying(256) NOT NULL,
    curve character varying(32) NOT NULL,
    public_key character varying(160) NOT NULL,
    addresses json NOT NULL,
    tags json NOT NULL,
    wrapped_key text NOT NULL,
    ciphertext text NOT NULL,
    imported boolean NOT NULL,
    exported boolean NOT NULL,
    version integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.service_keys (
    name character varying(64) NOT NULL,
    public_key character varying(160) NOT NULL,
    wrapped_key text NOT NULL,
    ciphertext text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.smart_contract_interfaces (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    address character varying(128) NOT NULL,
    interface text NOT NULL,
    interface_type character varying(64) NOT NULL,
    label character varying(256) NOT NULL,
    notes text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.tags (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    name character varying(256) NOT NULL,
    tag_type character varying(32) NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.user_tag_assignments (
    tag_id character varying(36) NOT NULL,
    user_id character varying(36) NOT NULL
);
CREATE TABLE public.users (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    name character varying(256) NOT NULL,
    email character varying(320),
    phone_number character varying(32),
    is_root boolean NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    view_version bigint DEFAULT '1'::bigint NOT NULL
);
CREATE TABLE public.verification_tokens (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    otp_id character varying(36) NOT NULL,
    activity_id character varying(36),
    verification_type character varying(32) NOT NULL,
    contact character varying(320) NOT NULL,
    public_key character varying(160) NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    signup_used_at timestamp with time zone,
    signup_fingerprint character varying(80),
    login_used_at timestamp with time zone,
    login_fingerprint character varying(80),
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.votes (
    id character varying(36) NOT NULL,
    activity_id character varying(36) NOT NULL,
    user_id character varying(36) NOT NULL,
    selection character varying(40) NOT NULL,
    message text NOT NULL,
    public_key character varying(160) NOT NULL,
    signature text NOT NULL,
    scheme character varying(64) NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.wallet_accounts (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    wallet_id character varying(36) NOT NULL,
    curve character varying(32) NOT NULL,
    path_format character varying(32) NOT NULL,
    path character varying(256) NOT NULL,
    address_format character varying(64) NOT NULL,
    address character varying(256) NOT NULL,
    public_key character varying(160) NOT NULL,
    name character varying(256),
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.wallets (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    name character varying(256) NOT NULL,
    wrapped_key text NOT NULL,
    ciphertext text NOT NULL,
    imported boolean NOT NULL,
    exported boolean NOT NULL,
    version integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.webhook_attempts (
    id character varying(36) NOT NULL,
    delivery_id character varying(36) NOT NULL,
    number integer NOT NULL,
    started_at timestamp with time zone NOT NULL,
    latency_ms double precision NOT NULL,
    status_code integer,
    response_excerpt text NOT NULL,
    error text,
    address character varying(64),
    outcome character varying(16) NOT NULL
);
CREATE TABLE public.webhook_deliveries (
    id character varying(36) NOT NULL,
    event_id character varying(64) NOT NULL,
    event_type character varying(64) NOT NULL,
    endpoint_id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    subject_organization_id character varying(36) NOT NULL,
    activity_id character varying(36),
    body text NOT NULL,
    status character varying(16) NOT NULL,
    attempts integer NOT NULL,
    schedule_attempts integer NOT NULL,
    next_attempt_at timestamp with time zone NOT NULL,
    dispatched_until timestamp with time zone,
    sending_until timestamp with time zone,
    sending_token character varying(36),
    last_status_code integer,
    last_error text,
    delivered_at timestamp with time zone,
    version integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.webhook_endpoints (
    id character varying(36) NOT NULL,
    organization_id character varying(36) NOT NULL,
    url text NOT NULL,
    name character varying(256) NOT NULL,
    is_active boolean NOT NULL,
    subscriptions json NOT NULL,
    source character varying(16) NOT NULL,
    failing_since timestamp with time zone,
    disabled_at timestamp with time zone,
    disabled_reason text,
    version integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);
CREATE TABLE public.webhook_signing_keys (
    key_id character varying(128) NOT NULL,
    public_key character varying(64) NOT NULL,
    activates_at_ms bigint NOT NULL,
    retires_at_ms bigint
);
INSERT INTO public.alembic_version VALUES ('0012_auth_proxy');
INSERT INTO public.alembic_version VALUES ('0011_oauth');
INSERT INTO public.alembic_version VALUES ('0010_sessions');
INSERT INTO public.alembic_version VALUES ('0007_webhook_notify');
INSERT INTO public.alembic_version VALUES ('0007_pipeline');
INSERT INTO public.alembic_version VALUES ('0006_identity_unique');
INSERT INTO public.alembic_version VALUES ('0004_policies');
INSERT INTO public.alembic_version VALUES ('0002_wallets');
INSERT INTO public.api_keys VALUES ('9cc7d7a7-9835-49fd-95c1-af48b6388a6a', 'acebc9b0-05f0-4135-ac0f-8514d7c9f558', 'e10e3b9f-1991-4e3d-99b7-3bde282b6a0d', 'root', '0343e2e2151dcc515b4e1e06733a4691627651cc1788aad4e9000300d0570793bf', 'API_KEY_CURVE_P256', 'CREDENTIAL_TYPE_API_KEY_P256', NULL, NULL, '2026-11-26 05:34:41.921244+00', '2026-11-26 05:34:41.921249+00');
INSERT INTO public.organizations VALUES ('acebc9b0-05f0-4135-ac0f-8514d7c9f558', 'landed main', NULL, 1, 1, '2026-11-26 05:34:41.914516+00', '2026-11-26 05:34:41.914522+00');
INSERT INTO public.policies VALUES ('c19bf04f-c6f4-4441-b28c-c601ceeec6f2', 'acebc9b0-05f0-4135-ac0f-8514d7c9f558', 'a policy from landed main', 'EFFECT_ALLOW', 'true', '', '', '', 1, '2026-11-26 05:34:41.924347+00', '2026-11-26 05:34:41.924355+00');
INSERT INTO public.users VALUES ('e10e3b9f-1991-4e3d-99b7-3bde282b6a0d', 'acebc9b0-05f0-4135-ac0f-8514d7c9f558', 'root', NULL, NULL, true, '2026-11-26 05:34:41.917114+00', '2026-11-26 05:34:41.917123+00', 853451296490162176);
INSERT INTO public.wallets VALUES ('14bda8ee-ed06-4b1d-9195-56682b5e8f0a', 'acebc9b0-05f0-4135-ac0f-8514d7c9f558', 'a wallet from landed main', 'fixture-wrapped-key', 'fixture-ciphertext', false, false, 1, '2026-11-26 05:34:41.925967+00', '2026-11-26 05:34:41.925971+00');
ALTER TABLE ONLY public.alembic_version
    ADD CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num);
ALTER TABLE ONLY public.activities
    ADD CONSTRAINT pk_activities PRIMARY KEY (id);
ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT pk_api_keys PRIMARY KEY (id);
ALTER TABLE ONLY public.auth_proxy_configs
    ADD CONSTRAINT pk_auth_proxy_configs PRIMARY KEY (id);
ALTER TABLE ONLY public.authenticators
    ADD CONSTRAINT pk_authenticators PRIMARY KEY (id);
ALTER TABLE ONLY public.deleted_organizations
    ADD CONSTRAINT pk_deleted_organizations PRIMARY KEY (organization_id);
ALTER TABLE ONLY public.import_targets
    ADD CONSTRAINT pk_import_targets PRIMARY KEY (id);
ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT pk_invitations PRIMARY KEY (id);
ALTER TABLE ONLY public.oauth2_credentials
    ADD CONSTRAINT pk_oauth2_credentials PRIMARY KEY (id);
ALTER TABLE ONLY public.oauth_providers
    ADD CONSTRAINT pk_oauth_providers PRIMARY KEY (id);
ALTER TABLE ONLY public.oidc_token_uses
    ADD CONSTRAINT pk_oidc_token_uses PRIMARY KEY (token_hash, usage);
ALTER TABLE ONLY public.organization_features
    ADD CONSTRAINT pk_organization_features PRIMARY KEY (organization_id, name);
ALTER TABLE ONLY public.organizations
    ADD CONSTRAINT pk_organizations PRIMARY KEY (id);
ALTER TABLE ONLY public.otp_codes
    ADD CONSTRAINT pk_otp_codes PRIMARY KEY (id);
ALTER TABLE ONLY public.policies
    ADD CONSTRAINT pk_policies PRIMARY KEY (id);
ALTER TABLE ONLY public.policy_evaluations
    ADD CONSTRAINT pk_policy_evaluations PRIMARY KEY (id);
ALTER TABLE ONLY public.private_key_addresses
    ADD CONSTRAINT pk_private_key_addresses PRIMARY KEY (private_key_id, address_format);
ALTER TABLE ONLY public.private_keys
    ADD CONSTRAINT pk_private_keys PRIMARY KEY (id);
ALTER TABLE ONLY public.service_keys
    ADD CONSTRAINT pk_service_keys PRIMARY KEY (name);
ALTER TABLE ONLY public.smart_contract_interfaces
    ADD CONSTRAINT pk_smart_contract_interfaces PRIMARY KEY (id);
ALTER TABLE ONLY public.tags
    ADD CONSTRAINT pk_tags PRIMARY KEY (id);
ALTER TABLE ONLY public.user_tag_assignments
    ADD CONSTRAINT pk_user_tag_assignments PRIMARY KEY (tag_id, user_id);
ALTER TABLE ONLY public.users
    ADD CONSTRAINT pk_users PRIMARY KEY (id);
ALTER TABLE ONLY public.verification_tokens
    ADD CONSTRAINT pk_verification_tokens PRIMARY KEY (id);
ALTER TABLE ONLY public.votes
    ADD CONSTRAINT pk_votes PRIMARY KEY (id);
ALTER TABLE ONLY public.wallet_accounts
    ADD CONSTRAINT pk_wallet_accounts PRIMARY KEY (id);
ALTER TABLE ONLY public.wallets
    ADD CONSTRAINT pk_wallets PRIMARY KEY (id);
ALTER TABLE ONLY public.webhook_attempts
    ADD CONSTRAINT pk_webhook_attempts PRIMARY KEY (id);
ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT pk_webhook_deliveries PRIMARY KEY (id);
ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT pk_webhook_endpoints PRIMARY KEY (id);
ALTER TABLE ONLY public.webhook_signing_keys
    ADD CONSTRAINT pk_webhook_signing_keys PRIMARY KEY (key_id);
ALTER TABLE ONLY public.activities
    ADD CONSTRAINT uq_activities_org_fingerprint UNIQUE (organization_id, fingerprint);
ALTER TABLE ONLY public.auth_proxy_configs
    ADD CONSTRAINT uq_auth_proxy_configs_organization_id UNIQUE (organization_id);
ALTER TABLE ONLY public.tags
    ADD CONSTRAINT uq_tags_organization_id UNIQUE (organization_id, tag_type, name);
ALTER TABLE ONLY public.wallet_accounts
    ADD CONSTRAINT uq_wallet_accounts_derivation UNIQUE (wallet_id, curve, path, address_format);
ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT uq_webhook_deliveries_event_endpoint UNIQUE (event_id, endpoint_id);
CREATE INDEX ix_activities_org_created ON public.activities USING btree (organization_id, created_at);
CREATE INDEX ix_activities_status_updated ON public.activities USING btree (status, updated_at);
CREATE INDEX ix_api_keys_organization_id ON public.api_keys USING btree (organization_id);
CREATE INDEX ix_api_keys_user_id ON public.api_keys USING btree (user_id);
CREATE INDEX ix_authenticators_organization_id ON public.authenticators USING btree (organization_id);
CREATE INDEX ix_authenticators_user_id ON public.authenticators USING btree (user_id);
CREATE INDEX ix_import_targets_organization_id ON public.import_targets USING btree (organization_id);
CREATE INDEX ix_import_targets_user_id ON public.import_targets USING btree (user_id);
CREATE INDEX ix_invitations_organization_id ON public.invitations USING btree (organization_id);
CREATE INDEX ix_oauth2_credentials_client_id ON public.oauth2_credentials USING btree (client_id);
CREATE INDEX ix_oauth2_credentials_organization_id ON public.oauth2_credentials USING btree (organization_id);
CREATE INDEX ix_oauth_providers_organization_id ON public.oauth_providers USING btree (organization_id);
CREATE INDEX ix_oauth_providers_subject ON public.oauth_providers USING btree (subject);
CREATE INDEX ix_oauth_providers_user_id ON public.oauth_providers USING btree (user_id);
CREATE INDEX ix_oidc_token_uses_expires_at ON public.oidc_token_uses USING btree (expires_at);
CREATE INDEX ix_organizations_parent_id ON public.organizations USING btree (parent_id);
CREATE INDEX ix_otp_codes_contact ON public.otp_codes USING btree (organization_id, contact);
CREATE INDEX ix_otp_codes_organization_id ON public.otp_codes USING btree (organization_id);
CREATE INDEX ix_policies_org_created ON public.policies USING btree (organization_id, created_at);
CREATE INDEX ix_policy_evaluations_activity ON public.policy_evaluations USING btree (activity_id, created_at);
CREATE INDEX ix_private_key_addresses_org_address ON public.private_key_addresses USING btree (organization_id, address);
CREATE INDEX ix_private_keys_organization_id ON public.private_keys USING btree (organization_id);
CREATE INDEX ix_smart_contract_interfaces_address ON public.smart_contract_interfaces USING btree (address);
CREATE INDEX ix_smart_contract_interfaces_organization_id ON public.smart_contract_interfaces USING btree (organization_id);
CREATE INDEX ix_tags_organization_id ON public.tags USING btree (organization_id);
CREATE INDEX ix_user_tag_assignments_user_id ON public.user_tag_assignments USING btree (user_id);
CREATE INDEX ix_users_email ON public.users USING btree (email);
CREATE INDEX ix_users_organization_id ON public.users USING btree (organization_id);
CREATE INDEX ix_users_phone_number ON public.users USING btree (phone_number);
CREATE INDEX ix_verification_tokens_organization_id ON public.verification_tokens USING btree (organization_id);
CREATE INDEX ix_votes_activity_id ON public.votes USING btree (activity_id);
CREATE INDEX ix_wallet_accounts_org_address ON public.wallet_accounts USING btree (organization_id, address);
CREATE INDEX ix_wallet_accounts_organization_id ON public.wallet_accounts USING btree (organization_id);
CREATE INDEX ix_wallet_accounts_wallet_created ON public.wallet_accounts USING btree (wallet_id, created_at);
CREATE INDEX ix_wallets_organization_id ON public.wallets USING btree (organization_id);
CREATE INDEX ix_webhook_attempts_delivery_id ON public.webhook_attempts USING btree (delivery_id);
CREATE INDEX ix_webhook_deliveries_activity_id ON public.webhook_deliveries USING btree (activity_id);
CREATE INDEX ix_webhook_deliveries_endpoint_id ON public.webhook_deliveries USING btree (endpoint_id);
CREATE INDEX ix_webhook_deliveries_endpoint_sending ON public.webhook_deliveries USING btree (endpoint_id, sending_until);
CREATE INDEX ix_webhook_deliveries_org_created ON public.webhook_deliveries USING btree (organization_id, created_at);
CREATE INDEX ix_webhook_deliveries_status_next ON public.webhook_deliveries USING btree (status, next_attempt_at);
CREATE INDEX ix_webhook_endpoints_organization_id ON public.webhook_endpoints USING btree (organization_id);
CREATE UNIQUE INDEX uq_api_keys_public_key_org ON public.api_keys USING btree (public_key, organization_id);
CREATE UNIQUE INDEX uq_authenticators_credential_id_org ON public.authenticators USING btree (credential_id, organization_id);
CREATE UNIQUE INDEX uq_oauth_providers_identity ON public.oauth_providers USING btree (organization_id, issuer, audience, subject);
CREATE TRIGGER activities_settled AFTER UPDATE OF status ON public.activities FOR EACH ROW EXECUTE FUNCTION public.walletd_activity_settled();
CREATE TRIGGER api_keys_user_view AFTER INSERT OR DELETE OR UPDATE ON public.api_keys FOR EACH ROW EXECUTE FUNCTION public.walletd_user_section_changed();
CREATE TRIGGER authenticators_user_view AFTER INSERT OR DELETE OR UPDATE ON public.authenticators FOR EACH ROW EXECUTE FUNCTION public.walletd_user_section_changed();
CREATE TRIGGER oauth_providers_user_view AFTER INSERT OR DELETE OR UPDATE ON public.oauth_providers FOR EACH ROW EXECUTE FUNCTION public.walletd_user_section_changed();
CREATE TRIGGER user_tag_assignments_user_view AFTER INSERT OR DELETE OR UPDATE ON public.user_tag_assignments FOR EACH ROW EXECUTE FUNCTION public.walletd_user_section_changed();
CREATE TRIGGER users_view_version BEFORE UPDATE ON public.users FOR EACH ROW EXECUTE FUNCTION public.walletd_user_row_changed();
CREATE TRIGGER webhook_deliveries_due AFTER INSERT ON public.webhook_deliveries FOR EACH ROW WHEN ((new.dispatched_until IS NULL)) EXECUTE FUNCTION public.walletd_deliveries_due();
CREATE TRIGGER webhook_endpoints_changed AFTER INSERT OR DELETE OR UPDATE ON public.webhook_endpoints FOR EACH ROW EXECUTE FUNCTION public.walletd_endpoints_changed();
ALTER TABLE ONLY public.activities
    ADD CONSTRAINT fk_activities_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT fk_api_keys_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT fk_api_keys_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.auth_proxy_configs
    ADD CONSTRAINT fk_auth_proxy_configs_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.authenticators
    ADD CONSTRAINT fk_authenticators_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.authenticators
    ADD CONSTRAINT fk_authenticators_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.deleted_organizations
    ADD CONSTRAINT fk_deleted_organizations_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.import_targets
    ADD CONSTRAINT fk_import_targets_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.import_targets
    ADD CONSTRAINT fk_import_targets_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT fk_invitations_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT fk_invitations_sender_user_id_users FOREIGN KEY (sender_user_id) REFERENCES public.users(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.oauth2_credentials
    ADD CONSTRAINT fk_oauth2_credentials_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.oauth_providers
    ADD CONSTRAINT fk_oauth_providers_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.oauth_providers
    ADD CONSTRAINT fk_oauth_providers_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.organization_features
    ADD CONSTRAINT fk_organization_features_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.organizations
    ADD CONSTRAINT fk_organizations_parent_id_organizations FOREIGN KEY (parent_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.otp_codes
    ADD CONSTRAINT fk_otp_codes_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.policies
    ADD CONSTRAINT fk_policies_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.policy_evaluations
    ADD CONSTRAINT fk_policy_evaluations_activity_id_activities FOREIGN KEY (activity_id) REFERENCES public.activities(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.policy_evaluations
    ADD CONSTRAINT fk_policy_evaluations_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.private_key_addresses
    ADD CONSTRAINT fk_private_key_addresses_private_key_id_private_keys FOREIGN KEY (private_key_id) REFERENCES public.private_keys(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.private_keys
    ADD CONSTRAINT fk_private_keys_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.smart_contract_interfaces
    ADD CONSTRAINT fk_smart_contract_interfaces_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.tags
    ADD CONSTRAINT fk_tags_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.user_tag_assignments
    ADD CONSTRAINT fk_user_tag_assignments_tag_id_tags FOREIGN KEY (tag_id) REFERENCES public.tags(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.user_tag_assignments
    ADD CONSTRAINT fk_user_tag_assignments_user_id_users FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.users
    ADD CONSTRAINT fk_users_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.verification_tokens
    ADD CONSTRAINT fk_verification_tokens_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.votes
    ADD CONSTRAINT fk_votes_activity_id_activities FOREIGN KEY (activity_id) REFERENCES public.activities(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.wallet_accounts
    ADD CONSTRAINT fk_wallet_accounts_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.wallet_accounts
    ADD CONSTRAINT fk_wallet_accounts_wallet_id_wallets FOREIGN KEY (wallet_id) REFERENCES public.wallets(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.wallets
    ADD CONSTRAINT fk_wallets_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.webhook_attempts
    ADD CONSTRAINT fk_webhook_attempts_delivery_id_webhook_deliveries FOREIGN KEY (delivery_id) REFERENCES public.webhook_deliveries(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT fk_webhook_deliveries_endpoint_id_webhook_endpoints FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoints(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT fk_webhook_deliveries_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT fk_webhook_endpoints_organization_id_organizations FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;
