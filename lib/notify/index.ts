/** `ident-resolver/notify` (docs/library.md): the app's notices: guarded callbacks, signatures, WebSub's verification, the notifier. */
export { callbackFormError, createCallbackClient, CALLBACK_ANSWER_BYTES, type CallbackAnswer, type CallbackClient } from "./callbacks.ts";
export { hubSignature, newWebhookSecret, sameSecret, webhookHeaders, WEBHOOK_SECRET_PREFIX } from "./sign.ts";
export { verifyIntent, type Intent } from "./websub.ts";
export { render, startNotifier, WEBHOOK_TEST_SCHEMA, type Notifier, type NotifierOptions } from "./notifier.ts";
