// A test page built on the official @turnkey/core (bundled with esbuild at test time).
// The Python test drives it through window.walletdTest; every call goes through the SDK.
import { StamperType, TurnkeyClient } from "@turnkey/core";

let client = null;

// MFA (tests/browser/test_turnkey_core_page.py): core's onMfaRequired parks here until the
// test has satisfied the steps, then core polls the activity to its end.
const mfaState = { context: null, release: null, signing: null, done: null };

async function init({ apiBaseUrl, authProxyUrl, authProxyConfigId, organizationId, rpId, mfa }) {
  const config = { apiBaseUrl, authProxyUrl, authProxyConfigId, organizationId };
  if (rpId) config.passkeyConfig = { rpId };
  if (mfa) {
    config.activityPoller = { intervalMs: 250, numRetries: 120 };
    config.onMfaRequired = async (context) => {
      mfaState.context = context;
      await new Promise((resolve) => { mfaState.release = resolve; });
    };
  }
  client = new TurnkeyClient(config);
  await client.init();
  return client.httpClient.proxyGetWalletKitConfig({});
}

async function initOtp(otpType, contact) {
  const answer = await client.httpClient.proxyInitOtp({ otpType, contact });
  return answer.otpId;
}

// The v1 paths (PROTOCOL.md §0.1): @turnkey/core's own verifyOtp pins Turnkey's key.
async function verifyAndSignUp(otpType, contact, otpId, otpCode) {
  const publicKey = await client.createApiKeyPair();
  const { verificationToken } = await client.httpClient.proxyVerifyOtp({ otpId, otpCode, publicKey });
  const found = await client.httpClient.proxyGetAccount({
    filterType: otpType === "OTP_TYPE_EMAIL" ? "EMAIL" : "PHONE_NUMBER", filterValue: contact });
  if (found.organizationId) {
    const login = await client.loginWithOtp({ verificationToken, organizationId: found.organizationId });
    return { signedUp: false, sessionToken: login.sessionToken };
  }
  const result = await client.signUpWithOtp({ verificationToken, contact, otpType });
  return { signedUp: true, sessionToken: result.sessionToken };
}

async function newKey() {
  return client.createApiKeyPair();
}

async function loginWithOidc(oidcToken, publicKey) {
  const answer = await client.httpClient.proxyOAuthLogin({ oidcToken, publicKey });
  await client.storeSession({ sessionToken: answer.session });
  return answer.session;
}

async function createWalletAndSign(message) {
  const walletId = await client.createWallet({ walletName: "Browser wallet",
    accounts: ["ADDRESS_FORMAT_ETHEREUM"] });
  const session = await client.getSession();
  const accounts = await client.httpClient.getWalletAccounts({ walletId,
    organizationId: session.organizationId });
  const account = accounts.accounts[0];
  const signed = await client.httpClient.signRawPayload({
    signWith: account.address, payload: message, encoding: "PAYLOAD_ENCODING_TEXT_UTF8",
    hashFunction: "HASH_FUNCTION_KECCAK256", organizationId: session.organizationId });
  return { walletId, address: account.address, r: signed.r, s: signed.s, v: signed.v,
    organizationId: session.organizationId, userId: session.userId };
}

async function proxyRaw(path, configId) {
  // What a page on any origin can read of an answer (fetch throws when CORS hides it).
  try {
    const response = await fetch(`${client.config.authProxyUrl}${path}`, { method: "POST",
      headers: { "Content-Type": "application/json", "X-Auth-Proxy-Config-Id": configId }, body: "{}" });
    return { readable: true, status: response.status };
  } catch (e) {
    return { readable: false, error: String(e) };
  }
}

async function addPasskey() {
  return client.addPasskey({ name: "browser passkey" });
}

async function createMfaPolicy(params) {
  const session = await client.getSession();
  const answer = await client.httpClient.createMfaPolicy({ ...params, userId: session.userId,
    organizationId: session.organizationId });
  return answer.mfaPolicyId;
}

function startSigning(message) {
  mfaState.context = null;
  mfaState.signing = createWalletAndSign(message).then((r) => { mfaState.done = r; },
    (e) => { mfaState.done = { error: String((e && e.message) || e) }; });
  return true;
}

function mfaContext() {
  return mfaState.context;
}

async function approveWithPasskey(fingerprint) {
  const session = await client.getSession();
  const answer = await client.httpClient.approveActivity(
    { fingerprint, organizationId: session.organizationId }, StamperType.Passkey);
  return answer.activity.status;
}

async function finishSigning() {
  mfaState.release();
  await mfaState.signing;
  return mfaState.done;
}

window.walletdTest = { init, initOtp, verifyAndSignUp, newKey, loginWithOidc, createWalletAndSign,
  proxyRaw, addPasskey, createMfaPolicy, startSigning, mfaContext, approveWithPasskey,
  finishSigning };
document.getElementById("state").textContent = "ready";
