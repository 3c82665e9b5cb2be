// A paying x402 v2 client for the end-to-end tests: the real @x402/fetch
// wrapper with the `exact` EVM scheme of @x402/evm, signing with a key made
// fresh for this run (it exists nowhere else).
//
// usage: node pay.mjs METHOD URL [BODY_FILE]
// prints one JSON line:
//   {status, paymentResponse, body, paymentSignature, requests}
//   status           the final HTTP status
//   paymentResponse  the decoded PAYMENT-RESPONSE header, or null
//   body             the final answer (parsed JSON, else its first 300 chars)
//   paymentSignature the raw PAYMENT-SIGNATURE header it sent, or null (for
//                    replay tests)
//   requests         how many HTTP requests it made (1 unpaid, 2 paid)
// or, when paying failed: {status: 0, error, paymentSignature, requests}.
import { readFileSync } from "node:fs";
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const [method, url, bodyFile] = process.argv.slice(2);
if (!method || !url) {
  console.error("usage: node pay.mjs METHOD URL [BODY_FILE]");
  process.exit(2);
}

const client = new x402Client();
registerExactEvmScheme(client, { signer: privateKeyToAccount(generatePrivateKey()) });

// observed is what the wrapped fetch saw: the requests and the payment header.
const observed = { requests: 0, paymentSignature: null };
async function observingFetch(input, init) {
  const request = new Request(input, init);
  observed.requests++;
  observed.paymentSignature = request.headers.get("payment-signature") ?? observed.paymentSignature;
  return fetch(request);
}

const init = { method, headers: { "Content-Type": "application/json" } };
if (bodyFile) init.body = readFileSync(bodyFile);

try {
  const res = await wrapFetchWithPayment(observingFetch, client)(url, init);
  const header = res.headers.get("payment-response");
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text.slice(0, 300);
  }
  console.log(JSON.stringify({
    status: res.status,
    paymentResponse: header ? decodePaymentResponseHeader(header) : null,
    body,
    paymentSignature: observed.paymentSignature,
    requests: observed.requests,
  }));
} catch (e) {
  console.log(JSON.stringify({ status: 0, error: String(e).slice(0, 300), ...observed }));
}
