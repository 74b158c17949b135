BEGIN TRANSACTION;
CREATE TABLE activities (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	type VARCHAR(128) NOT NULL, 
	status VARCHAR(64) NOT NULL, 
	fingerprint VARCHAR(80) NOT NULL, 
	body TEXT NOT NULL, 
	timestamp_ms VARCHAR(32) NOT NULL, 
	intent JSON NOT NULL, 
	result JSON NOT NULL, 
	failure JSON, 
	user_id VARCHAR(36), 
	version INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_activities PRIMARY KEY (id), 
	CONSTRAINT fk_activities_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE, 
	CONSTRAINT uq_activities_org_fingerprint UNIQUE (organization_id, fingerprint)
);
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
INSERT INTO "alembic_version" VALUES('0012_auth_proxy');
INSERT INTO "alembic_version" VALUES('0011_oauth');
INSERT INTO "alembic_version" VALUES('0010_sessions');
INSERT INTO "alembic_version" VALUES('0007_webhook_notify');
INSERT INTO "alembic_version" VALUES('0007_pipeline');
INSERT INTO "alembic_version" VALUES('0006_identity_unique');
INSERT INTO "alembic_version" VALUES('0004_policies');
INSERT INTO "alembic_version" VALUES('0002_wallets');
CREATE TABLE api_keys (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	user_id VARCHAR(36) NOT NULL, 
	name VARCHAR(256) NOT NULL, 
	public_key VARCHAR(160) NOT NULL, 
	curve VARCHAR(64) NOT NULL, 
	credential_type VARCHAR(64) NOT NULL, 
	expiration_seconds VARCHAR(32), 
	expires_at DATETIME, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_api_keys PRIMARY KEY (id), 
	CONSTRAINT fk_api_keys_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE, 
	CONSTRAINT fk_api_keys_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
INSERT INTO "api_keys" VALUES('df0841c2-b1a6-42a4-ba41-10a2537f19e3','40e28f3b-85c4-4c2f-a365-6d7a5f2e02e7','92d323a1-6541-400e-ae27-f1559940fcb1','root','023b881d1016647419e7217778c4800e0863e5d5e73e2acebbff3a7d1416548ade','API_KEY_CURVE_P256','CREDENTIAL_TYPE_API_KEY_P256',NULL,NULL,'2026-11-26 05:34:40.788209','2026-11-26 05:34:40.788212');
CREATE TABLE auth_proxy_configs (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	enabled BOOLEAN NOT NULL, 
	user_id VARCHAR(36) NOT NULL, 
	api_public_key VARCHAR(66) NOT NULL, 
	api_private_key_sealed TEXT NOT NULL, 
	sealed_to VARCHAR(130) NOT NULL, 
	settings JSON NOT NULL, 
	version INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_auth_proxy_configs PRIMARY KEY (id), 
	CONSTRAINT fk_auth_proxy_configs_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE, 
	CONSTRAINT uq_auth_proxy_configs_organization_id UNIQUE (organization_id)
);
CREATE TABLE authenticators (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	user_id VARCHAR(36) NOT NULL, 
	name VARCHAR(256) NOT NULL, 
	credential_id VARCHAR(1400) NOT NULL, 
	public_key TEXT NOT NULL, 
	algorithm INTEGER NOT NULL, 
	aaguid VARCHAR(64) NOT NULL, 
	attestation_type VARCHAR(32) NOT NULL, 
	model VARCHAR(128) NOT NULL, 
	transports JSON NOT NULL, 
	sign_count INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_authenticators PRIMARY KEY (id), 
	CONSTRAINT fk_authenticators_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE, 
	CONSTRAINT fk_authenticators_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE TABLE deleted_organizations (
	organization_id VARCHAR(36) NOT NULL, 
	deleted_at DATETIME NOT NULL, 
	CONSTRAINT pk_deleted_organizations PRIMARY KEY (organization_id), 
	CONSTRAINT fk_deleted_organizations_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE
);
CREATE TABLE import_targets (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	user_id VARCHAR(36) NOT NULL, 
	kind VARCHAR(32) NOT NULL, 
	public_key VARCHAR(160) NOT NULL, 
	wrapped_key TEXT NOT NULL, 
	ciphertext TEXT NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_import_targets PRIMARY KEY (id), 
	CONSTRAINT fk_import_targets_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE, 
	CONSTRAINT fk_import_targets_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE TABLE invitations (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	receiver_user_name VARCHAR(256) NOT NULL, 
	receiver_email VARCHAR(320) NOT NULL, 
	receiver_user_tags JSON NOT NULL, 
	access_type VARCHAR(32) NOT NULL, 
	sender_user_id VARCHAR(36) NOT NULL, 
	status VARCHAR(32) NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_invitations PRIMARY KEY (id), 
	CONSTRAINT fk_invitations_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE, 
	CONSTRAINT fk_invitations_sender_user_id_users FOREIGN KEY(sender_user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE TABLE oauth2_credentials (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	provider VARCHAR(64) NOT NULL, 
	client_id VARCHAR(512) NOT NULL, 
	encrypted_client_secret TEXT NOT NULL, 
	wrapped_key TEXT NOT NULL, 
	ciphertext TEXT NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_oauth2_credentials PRIMARY KEY (id), 
	CONSTRAINT fk_oauth2_credentials_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE
);
CREATE TABLE oauth_providers (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	user_id VARCHAR(36) NOT NULL, 
	name VARCHAR(256) NOT NULL, 
	issuer VARCHAR(512) NOT NULL, 
	audience VARCHAR(512) NOT NULL, 
	subject VARCHAR(512) NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_oauth_providers PRIMARY KEY (id), 
	CONSTRAINT fk_oauth_providers_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE, 
	CONSTRAINT fk_oauth_providers_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE TABLE oidc_token_uses (
	token_hash VARCHAR(64) NOT NULL, 
	usage VARCHAR(16) NOT NULL, 
	fingerprint VARCHAR(80) NOT NULL, 
	used_at DATETIME NOT NULL, 
	expires_at DATETIME NOT NULL, 
	CONSTRAINT pk_oidc_token_uses PRIMARY KEY (token_hash, usage)
);
CREATE TABLE organization_features (
	organization_id VARCHAR(36) NOT NULL, 
	name VARCHAR(128) NOT NULL, 
	value TEXT NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_organization_features PRIMARY KEY (organization_id, name), 
	CONSTRAINT fk_organization_features_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE
);
CREATE TABLE organizations (
	id VARCHAR(36) NOT NULL, 
	name VARCHAR(256) NOT NULL, 
	parent_id VARCHAR(36), 
	root_quorum_threshold INTEGER NOT NULL, 
	version INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_organizations PRIMARY KEY (id), 
	CONSTRAINT fk_organizations_parent_id_organizations FOREIGN KEY(parent_id) REFERENCES organizations (id) ON DELETE CASCADE
);
INSERT INTO "organizations" VALUES('40e28f3b-85c4-4c2f-a365-6d7a5f2e02e7','landed main',NULL,1,1,'2026-11-26 05:34:40.759903','2026-11-26 05:34:40.759909');
CREATE TABLE otp_codes (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	purpose VARCHAR(16) NOT NULL, 
	otp_type VARCHAR(32) NOT NULL, 
	contact VARCHAR(320) NOT NULL, 
	user_id VARCHAR(36), 
	code_hash VARCHAR(64) NOT NULL, 
	key_version INTEGER NOT NULL, 
	alphanumeric BOOLEAN NOT NULL, 
	attempts INTEGER NOT NULL, 
	expires_at DATETIME NOT NULL, 
	used_at DATETIME, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_otp_codes PRIMARY KEY (id), 
	CONSTRAINT fk_otp_codes_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE
);
CREATE TABLE policies (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	name VARCHAR(256) NOT NULL, 
	effect VARCHAR(32) NOT NULL, 
	condition TEXT NOT NULL, 
	consensus TEXT NOT NULL, 
	time_expression TEXT NOT NULL, 
	notes TEXT NOT NULL, 
	version INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_policies PRIMARY KEY (id), 
	CONSTRAINT fk_policies_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE
);
INSERT INTO "policies" VALUES('0d284f3b-36df-46e4-82e7-d21e33563a93','40e28f3b-85c4-4c2f-a365-6d7a5f2e02e7','a policy from landed main','EFFECT_ALLOW','true','','','',1,'2026-11-26 05:34:40.792820','2026-11-26 05:34:40.792824');
CREATE TABLE policy_evaluations (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	activity_id VARCHAR(36) NOT NULL, 
	vote_id VARCHAR(36) NOT NULL, 
	outcome VARCHAR(40) NOT NULL, 
	reason TEXT NOT NULL, 
	evaluations JSON NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_policy_evaluations PRIMARY KEY (id), 
	CONSTRAINT fk_policy_evaluations_activity_id_activities FOREIGN KEY(activity_id) REFERENCES activities (id) ON DELETE CASCADE, 
	CONSTRAINT fk_policy_evaluations_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE
);
CREATE TABLE private_key_addresses (
	private_key_id VARCHAR(36) NOT NULL, 
	address_format VARCHAR(64) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	address VARCHAR(256) NOT NULL, 
	CONSTRAINT pk_private_key_addresses PRIMARY KEY (private_key_id, address_format), 
	CONSTRAINT fk_private_key_addresses_private_key_id_private_keys FOREIGN KEY(private_key_id) REFERENCES private_keys (id) ON DELETE CASCADE
);
CREATE TABLE private_keys (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	name VARCHAR(256) NOT NULL, 
	curve VARCHAR(32) NOT NULL, 
	public_key VARCHAR(160) NOT NULL, 
	addresses JSON NOT NULL, 
	tags JSON NOT NULL, 
	wrapped_key TEXT NOT NULL, 
	ciphertext TEXT NOT NULL, 
	imported BOOLEAN NOT NULL, 
	exported BOOLEAN NOT NULL, 
	version INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_private_keys PRIMARY KEY (id), 
	CONSTRAINT fk_private_keys_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE
);
CREATE TABLE service_keys (
	name VARCHAR(64) NOT NULL, 
	public_key VARCHAR(160) NOT NULL, 
	wrapped_key TEXT NOT NULL, 
	ciphertext TEXT NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_service_keys PRIMARY KEY (name)
);
CREATE TABLE smart_contract_interfaces (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	address VARCHAR(128) NOT NULL, 
	interface TEXT NOT NULL, 
	interface_type VARCHAR(64) NOT NULL, 
	label VARCHAR(256) NOT NULL, 
	notes TEXT NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_smart_contract_interfaces PRIMARY KEY (id), 
	CONSTRAINT fk_smart_contract_interfaces_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE
);
CREATE TABLE tags (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	name VARCHAR(256) NOT NULL, 
	tag_type VARCHAR(32) NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_tags PRIMARY KEY (id), 
	CONSTRAINT fk_tags_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE, 
	CONSTRAINT uq_tags_organization_id UNIQUE (organization_id, tag_type, name)
);
CREATE TABLE user_tag_assignments (
	tag_id VARCHAR(36) NOT NULL, 
	user_id VARCHAR(36) NOT NULL, 
	CONSTRAINT pk_user_tag_assignments PRIMARY KEY (tag_id, user_id), 
	CONSTRAINT fk_user_tag_assignments_tag_id_tags FOREIGN KEY(tag_id) REFERENCES tags (id) ON DELETE CASCADE, 
	CONSTRAINT fk_user_tag_assignments_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE TABLE users (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	name VARCHAR(256) NOT NULL, 
	email VARCHAR(320), 
	phone_number VARCHAR(32), 
	is_root BOOLEAN NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, view_version BIGINT DEFAULT '1' NOT NULL, 
	CONSTRAINT pk_users PRIMARY KEY (id), 
	CONSTRAINT fk_users_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE
);
INSERT INTO "users" VALUES('92d323a1-6541-400e-ae27-f1559940fcb1','40e28f3b-85c4-4c2f-a365-6d7a5f2e02e7','root',NULL,NULL,1,'2026-11-26 05:34:40.760920','2026-11-26 05:34:40.760922',7045100495487055400);
CREATE TABLE verification_tokens (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	otp_id VARCHAR(36) NOT NULL, 
	activity_id VARCHAR(36), 
	verification_type VARCHAR(32) NOT NULL, 
	contact VARCHAR(320) NOT NULL, 
	public_key VARCHAR(160) NOT NULL, 
	expires_at DATETIME NOT NULL, 
	signup_used_at DATETIME, 
	signup_fingerprint VARCHAR(80), 
	login_used_at DATETIME, 
	login_fingerprint VARCHAR(80), 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_verification_tokens PRIMARY KEY (id), 
	CONSTRAINT fk_verification_tokens_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE
);
CREATE TABLE votes (
	id VARCHAR(36) NOT NULL, 
	activity_id VARCHAR(36) NOT NULL, 
	user_id VARCHAR(36) NOT NULL, 
	selection VARCHAR(40) NOT NULL, 
	message TEXT NOT NULL, 
	public_key VARCHAR(160) NOT NULL, 
	signature TEXT NOT NULL, 
	scheme VARCHAR(64) NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_votes PRIMARY KEY (id), 
	CONSTRAINT fk_votes_activity_id_activities FOREIGN KEY(activity_id) REFERENCES activities (id) ON DELETE CASCADE
);
CREATE TABLE wallet_accounts (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	wallet_id VARCHAR(36) NOT NULL, 
	curve VARCHAR(32) NOT NULL, 
	path_format VARCHAR(32) NOT NULL, 
	path VARCHAR(256) NOT NULL, 
	address_format VARCHAR(64) NOT NULL, 
	address VARCHAR(256) NOT NULL, 
	public_key VARCHAR(160) NOT NULL, 
	name VARCHAR(256), 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_wallet_accounts PRIMARY KEY (id), 
	CONSTRAINT fk_wallet_accounts_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE, 
	CONSTRAINT fk_wallet_accounts_wallet_id_wallets FOREIGN KEY(wallet_id) REFERENCES wallets (id) ON DELETE CASCADE, 
	CONSTRAINT uq_wallet_accounts_derivation UNIQUE (wallet_id, curve, path, address_format)
);
CREATE TABLE wallets (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	name VARCHAR(256) NOT NULL, 
	wrapped_key TEXT NOT NULL, 
	ciphertext TEXT NOT NULL, 
	imported BOOLEAN NOT NULL, 
	exported BOOLEAN NOT NULL, 
	version INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_wallets PRIMARY KEY (id), 
	CONSTRAINT fk_wallets_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE
);
INSERT INTO "wallets" VALUES('85bc59ec-f85b-4876-8813-c36abbecaa91','40e28f3b-85c4-4c2f-a365-6d7a5f2e02e7','a wallet from landed main','fixture-wrapped-key','fixture-ciphertext',0,0,1,'2026-11-26 05:34:40.793567','2026-11-26 05:34:40.793569');
CREATE TABLE webhook_attempts (
	id VARCHAR(36) NOT NULL, 
	delivery_id VARCHAR(36) NOT NULL, 
	number INTEGER NOT NULL, 
	started_at DATETIME NOT NULL, 
	latency_ms FLOAT NOT NULL, 
	status_code INTEGER, 
	response_excerpt TEXT NOT NULL, 
	error TEXT, 
	address VARCHAR(64), 
	outcome VARCHAR(16) NOT NULL, 
	CONSTRAINT pk_webhook_attempts PRIMARY KEY (id), 
	CONSTRAINT fk_webhook_attempts_delivery_id_webhook_deliveries FOREIGN KEY(delivery_id) REFERENCES webhook_deliveries (id) ON DELETE CASCADE
);
CREATE TABLE webhook_deliveries (
	id VARCHAR(36) NOT NULL, 
	event_id VARCHAR(64) NOT NULL, 
	event_type VARCHAR(64) NOT NULL, 
	endpoint_id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	subject_organization_id VARCHAR(36) NOT NULL, 
	activity_id VARCHAR(36), 
	body TEXT NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	attempts INTEGER NOT NULL, 
	schedule_attempts INTEGER NOT NULL, 
	next_attempt_at DATETIME NOT NULL, 
	dispatched_until DATETIME, 
	sending_until DATETIME, 
	sending_token VARCHAR(36), 
	last_status_code INTEGER, 
	last_error TEXT, 
	delivered_at DATETIME, 
	version INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_webhook_deliveries PRIMARY KEY (id), 
	CONSTRAINT fk_webhook_deliveries_endpoint_id_webhook_endpoints FOREIGN KEY(endpoint_id) REFERENCES webhook_endpoints (id) ON DELETE CASCADE, 
	CONSTRAINT fk_webhook_deliveries_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE, 
	CONSTRAINT uq_webhook_deliveries_event_endpoint UNIQUE (event_id, endpoint_id)
);
CREATE TABLE webhook_endpoints (
	id VARCHAR(36) NOT NULL, 
	organization_id VARCHAR(36) NOT NULL, 
	url TEXT NOT NULL, 
	name VARCHAR(256) NOT NULL, 
	is_active BOOLEAN NOT NULL, 
	subscriptions JSON NOT NULL, 
	source VARCHAR(16) NOT NULL, 
	failing_since DATETIME, 
	disabled_at DATETIME, 
	disabled_reason TEXT, 
	version INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_webhook_endpoints PRIMARY KEY (id), 
	CONSTRAINT fk_webhook_endpoints_organization_id_organizations FOREIGN KEY(organization_id) REFERENCES organizations (id) ON DELETE CASCADE
);
CREATE TABLE webhook_signing_keys (
	key_id VARCHAR(128) NOT NULL, 
	public_key VARCHAR(64) NOT NULL, 
	activates_at_ms BIGINT NOT NULL, 
	retires_at_ms BIGINT, 
	CONSTRAINT pk_webhook_signing_keys PRIMARY KEY (key_id)
);
CREATE INDEX ix_organizations_parent_id ON organizations (parent_id);
CREATE INDEX ix_activities_org_created ON activities (organization_id, created_at);
CREATE INDEX ix_activities_status_updated ON activities (status, updated_at);
CREATE INDEX ix_users_email ON users (email);
CREATE INDEX ix_users_organization_id ON users (organization_id);
CREATE INDEX ix_users_phone_number ON users (phone_number);
CREATE INDEX ix_api_keys_organization_id ON api_keys (organization_id);
CREATE INDEX ix_api_keys_user_id ON api_keys (user_id);
CREATE INDEX ix_votes_activity_id ON votes (activity_id);
CREATE INDEX ix_oauth2_credentials_organization_id ON oauth2_credentials (organization_id);
CREATE INDEX ix_oauth2_credentials_client_id ON oauth2_credentials (client_id);
CREATE INDEX ix_oidc_token_uses_expires_at ON oidc_token_uses (expires_at);
CREATE INDEX ix_otp_codes_organization_id ON otp_codes (organization_id);
CREATE INDEX ix_otp_codes_contact ON otp_codes (organization_id, contact);
CREATE INDEX ix_verification_tokens_organization_id ON verification_tokens (organization_id);
CREATE INDEX ix_webhook_endpoints_organization_id ON webhook_endpoints (organization_id);
CREATE INDEX ix_webhook_deliveries_activity_id ON webhook_deliveries (activity_id);
CREATE INDEX ix_webhook_deliveries_endpoint_id ON webhook_deliveries (endpoint_id);
CREATE INDEX ix_webhook_deliveries_org_created ON webhook_deliveries (organization_id, created_at);
CREATE INDEX ix_webhook_deliveries_status_next ON webhook_deliveries (status, next_attempt_at);
CREATE INDEX ix_webhook_attempts_delivery_id ON webhook_attempts (delivery_id);
CREATE INDEX ix_webhook_deliveries_endpoint_sending ON webhook_deliveries (endpoint_id, sending_until);
CREATE INDEX ix_smart_contract_interfaces_address ON smart_contract_interfaces (address);
CREATE INDEX ix_smart_contract_interfaces_organization_id ON smart_contract_interfaces (organization_id);
CREATE INDEX ix_tags_organization_id ON tags (organization_id);
CREATE INDEX ix_authenticators_organization_id ON authenticators (organization_id);
CREATE INDEX ix_authenticators_user_id ON authenticators (user_id);
CREATE INDEX ix_invitations_organization_id ON invitations (organization_id);
CREATE INDEX ix_oauth_providers_organization_id ON oauth_providers (organization_id);
CREATE INDEX ix_oauth_providers_subject ON oauth_providers (subject);
CREATE INDEX ix_oauth_providers_user_id ON oauth_providers (user_id);
CREATE INDEX ix_user_tag_assignments_user_id ON user_tag_assignments (user_id);
CREATE TRIGGER users_view_version AFTER UPDATE ON users
        WHEN NEW.view_version = OLD.view_version
        BEGIN UPDATE users SET view_version = abs(random()) WHERE id = NEW.id; END;
CREATE TRIGGER api_keys_user_view_insert AFTER INSERT ON api_keys BEGIN UPDATE users SET view_version = abs(random()) WHERE id = NEW.user_id; END;
CREATE TRIGGER api_keys_user_view_update AFTER UPDATE ON api_keys BEGIN UPDATE users SET view_version = abs(random()) WHERE id = OLD.user_id; UPDATE users SET view_version = abs(random()) WHERE id = NEW.user_id; END;
CREATE TRIGGER api_keys_user_view_delete AFTER DELETE ON api_keys BEGIN UPDATE users SET view_version = abs(random()) WHERE id = OLD.user_id; END;
CREATE TRIGGER authenticators_user_view_insert AFTER INSERT ON authenticators BEGIN UPDATE users SET view_version = abs(random()) WHERE id = NEW.user_id; END;
CREATE TRIGGER authenticators_user_view_update AFTER UPDATE ON authenticators BEGIN UPDATE users SET view_version = abs(random()) WHERE id = OLD.user_id; UPDATE users SET view_version = abs(random()) WHERE id = NEW.user_id; END;
CREATE TRIGGER authenticators_user_view_delete AFTER DELETE ON authenticators BEGIN UPDATE users SET view_version = abs(random()) WHERE id = OLD.user_id; END;
CREATE TRIGGER oauth_providers_user_view_insert AFTER INSERT ON oauth_providers BEGIN UPDATE users SET view_version = abs(random()) WHERE id = NEW.user_id; END;
CREATE TRIGGER oauth_providers_user_view_update AFTER UPDATE ON oauth_providers BEGIN UPDATE users SET view_version = abs(random()) WHERE id = OLD.user_id; UPDATE users SET view_version = abs(random()) WHERE id = NEW.user_id; END;
CREATE TRIGGER oauth_providers_user_view_delete AFTER DELETE ON oauth_providers BEGIN UPDATE users SET view_version = abs(random()) WHERE id = OLD.user_id; END;
CREATE TRIGGER user_tag_assignments_user_view_insert AFTER INSERT ON user_tag_assignments BEGIN UPDATE users SET view_version = abs(random()) WHERE id = NEW.user_id; END;
CREATE TRIGGER user_tag_assignments_user_view_update AFTER UPDATE ON user_tag_assignments BEGIN UPDATE users SET view_version = abs(random()) WHERE id = OLD.user_id; UPDATE users SET view_version = abs(random()) WHERE id = NEW.user_id; END;
CREATE TRIGGER user_tag_assignments_user_view_delete AFTER DELETE ON user_tag_assignments BEGIN UPDATE users SET view_version = abs(random()) WHERE id = OLD.user_id; END;
CREATE UNIQUE INDEX uq_api_keys_public_key_org ON api_keys (public_key, organization_id);
CREATE UNIQUE INDEX uq_authenticators_credential_id_org ON authenticators (credential_id, organization_id);
CREATE UNIQUE INDEX uq_oauth_providers_identity ON oauth_providers (organization_id, issuer, audience, subject);
CREATE INDEX ix_policies_org_created ON policies (organization_id, created_at);
CREATE INDEX ix_policy_evaluations_activity ON policy_evaluations (activity_id, created_at);
CREATE INDEX ix_wallets_organization_id ON wallets (organization_id);
CREATE INDEX ix_wallet_accounts_org_address ON wallet_accounts (organization_id, address);
CREATE INDEX ix_wallet_accounts_organization_id ON wallet_accounts (organization_id);
CREATE INDEX ix_wallet_accounts_wallet_created ON wallet_accounts (wallet_id, created_at);
CREATE INDEX ix_private_keys_organization_id ON private_keys (organization_id);
CREATE INDEX ix_private_key_addresses_org_address ON private_key_addresses (organization_id, address);
CREATE INDEX ix_import_targets_organization_id ON import_targets (organization_id);
CREATE INDEX ix_import_targets_user_id ON import_targets (user_id);
COMMIT;
