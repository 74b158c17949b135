// A test page built on the official @turnkey/core (bundled with esbuild at test time).
// The Python test drives it through window.walletdTest; every call goes through the SDK.
import { TurnkeyClient } from "@turnkey/core";

let client = null;

async function init({ apiBaseUrl, authProxyUrl, authProxyConfigId, organizationId }) {
  client = new TurnkeyClient({ apiBaseUrl, authProxyUrl, authProxyConfigId, organizationId });
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

window.walletdTest = { init, initOtp, verifyAndSignUp, newKey, loginWithOidc, createWalletAndSign, proxyRaw };
document.getElementById("state").textContent = "ready";
