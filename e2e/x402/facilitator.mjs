// A loopback x402 v2 facilitator for the end-to-end tests (.ci/x402-e2e.sh,
// .ci/x402-mcp-e2e.sh). What it checks is the SDK's own code: @x402/core's
// x402Facilitator with @x402/evm's `exact` scheme (EIP-712 signature of the
// EIP-3009 authorization, recipient, amount, time window, asset, a simulated
// transfer before saying yes, the Transfer event after settling). Only the
// chain is simulated, in memory (SimulatedChain below): the USDC contracts of
// Base and Base Sepolia exist and behave as EIP-3009 tokens, every other
// address is an externally owned account funded with test money, and an
// authorization nonce settles once.
//
// usage: node facilitator.mjs [PORT]    (127.0.0.1 only; PORT 0 or none picks
// a free one; the first line on stdout names the address)
//
//   GET  /supported  the kinds and signers, as a facilitator publishes them
//   POST /verify     {paymentPayload, paymentRequirements} -> VerifyResponse
//   POST /settle     {paymentPayload, paymentRequirements} -> SettleResponse
//   GET  /log        every verify and settle so far, oldest first:
//                    {op: "verify", isValid, reason?} or
//                    {op: "settle", success, reason?}; a request that threw
//                    is {op: <path>, error}
//
// X402_FACILITATOR_MODE picks how it answers (see modes below); the default,
// and today the only one, is "simulated".
import http from "node:http";
import { x402Facilitator } from "@x402/core/facilitator";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import {
  decodeFunctionData,
  encodeAbiParameters,
  encodeEventTopics,
  encodeFunctionResult,
  getAddress,
  isAddressEqual,
  keccak256,
  parseAbi,
  recoverTypedDataAddress,
  serializeSignature,
  toHex,
  verifyTypedData,
} from "viem";

// tokens are the USDC contracts the verifier charges in, by network; their
// EIP-712 domains are the ones the real contracts use.
const tokens = [
  { network: "eip155:84532", chainId: 84532, address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", name: "USDC", version: "2" },
  { network: "eip155:8453", chainId: 8453, address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", name: "USD Coin", version: "2" },
];

// multicall3Address is Multicall3, which the SDK reads through when it
// diagnoses a failed simulation.
const multicall3Address = "0xcA11bde05977b3631167028862bE2a173976CA11";

// fundedBalance is what every account holds before it first pays: 1,000
// USDC of test money (6 decimals).
const fundedBalance = 1_000_000_000n;

// facilitatorAddress is the account that would send the settling
// transactions; /supported lists it as the signer.
const facilitatorAddress = "0x00000000000000000000000000000000000fAC11";

// tokenAbi is the part of an EIP-3009 token the SDK calls.
const tokenAbi = parseAbi([
  "function name() view returns (string)",
  "function version() view returns (string)",
  "function balanceOf(address account) view returns (uint256)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
]);

// authorizationTypes are EIP-3009's EIP-712 types.
const authorizationTypes = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
};

// Reverted is a contract call that reverted; its message is the token's
// revert string, which the SDK maps to an x402 error reason.
class Reverted extends Error {}

// SimulatedChain holds the state of the token contracts: balances, used
// authorizations, and the receipts of the transactions it ran.
class SimulatedChain {
  constructor(tokenList) {
    this.tokens = new Map(tokenList.map((t) => [t.address.toLowerCase(), t]));
    this.balances = new Map(); // "<token>:<account>" -> bigint
    this.usedAuthorizations = new Set(); // "<token>:<authorizer>:<nonce>"
    this.receipts = new Map(); // transaction hash -> receipt
  }

  // token returns the token contract at address, or undefined.
  token(address) {
    return this.tokens.get(String(address).toLowerCase());
  }

  balance(token, account) {
    return this.balances.get(`${token.address}:${getAddress(account)}`) ?? fundedBalance;
  }

  authorizationUsed(token, authorizer, nonce) {
    return this.usedAuthorizations.has(`${token.address}:${getAddress(authorizer)}:${String(nonce).toLowerCase()}`);
  }

  // code is eth_getCode: contracts have code, accounts have none.
  code(address) {
    if (this.token(address) || isAddressEqual(address, multicall3Address)) return "0x6080604052";
    return "0x";
  }

  // view runs a call without changing state (eth_call).
  async view(token, functionName, args) {
    switch (functionName) {
      case "name":
        return token.name;
      case "version":
        return token.version;
      case "balanceOf":
        return this.balance(token, args[0]);
      case "authorizationState":
        return this.authorizationUsed(token, args[0], args[1]);
      case "transferWithAuthorization": {
        const transfer = await authorizedTransfer(token, args);
        this.checkTransfer(token, transfer, { nonce: false });
        return undefined;
      }
      default:
        throw new Reverted(`execution reverted: the token has no function ${functionName}`);
    }
  }

  // checkTransfer is transferWithAuthorization's checks, in the order the
  // USDC contract makes them. With nonce false a used authorization passes:
  // the eth_call the SDK makes while verifying does not look at the nonce
  // here, so a used payment is refused when it settles
  // (invalid_exact_evm_nonce_already_used), and the verifier's own replay
  // guard is what refuses it first. A real chain refuses it in the eth_call
  // too: see the "nonce" note in e2e/x402/README.md.
  checkTransfer(token, t, { nonce: checkNonce = true } = {}) {
    const now = BigInt(Math.floor(Date.now() / 1000));
    if (now <= t.validAfter) throw new Reverted("FiatTokenV2: authorization is not yet valid");
    if (now >= t.validBefore) throw new Reverted("FiatTokenV2: authorization is expired");
    if (checkNonce && this.authorizationUsed(token, t.from, t.nonce)) throw new Reverted("FiatTokenV2: authorization is used or canceled");
    if (!t.signed) throw new Reverted("FiatTokenV2: invalid signature");
    if (this.balance(token, t.from) < t.value) throw new Reverted("ERC20: transfer amount exceeds balance");
  }

  // transact runs a state-changing call and returns its transaction hash.
  // The checks and the state change run with no await between them, so
  // concurrent settlements of one authorization cannot both pass.
  async transact(token, functionName, args) {
    if (functionName !== "transferWithAuthorization") {
      throw new Reverted(`execution reverted: the simulated chain runs no ${functionName}`);
    }
    const t = await authorizedTransfer(token, args);
    this.checkTransfer(token, t);
    this.usedAuthorizations.add(`${token.address}:${t.from}:${String(t.nonce).toLowerCase()}`);
    this.balances.set(`${token.address}:${t.from}`, this.balance(token, t.from) - t.value);
    this.balances.set(`${token.address}:${t.to}`, this.balance(token, t.to) + t.value);
    const hash = keccak256(toHex(`${token.network} ${t.from} ${t.nonce}`));
    const log = {
      address: token.address,
      topics: encodeEventTopics({ abi: tokenAbi, eventName: "Transfer", args: { from: t.from, to: t.to } }),
      data: encodeAbiParameters([{ type: "uint256" }], [t.value]),
      transactionHash: hash,
      logIndex: 0,
    };
    this.receipts.set(hash, { status: "success", transactionHash: hash, logs: [log] });
    return hash;
  }
}

// authorizedTransfer reads transferWithAuthorization's arguments: the
// transfer, and whether its signature, (v, r, s) or packed, is the from
// address's under the token's own EIP-712 domain (the check the token
// contract makes, independent of the SDK's).
async function authorizedTransfer(token, args) {
  const [from, to, value, validAfter, validBefore, nonce, ...signatureArgs] = args;
  const t = { from: getAddress(from), to: getAddress(to), value: BigInt(value), validAfter: BigInt(validAfter), validBefore: BigInt(validBefore), nonce };
  return { ...t, signed: await signedBy(token, t, signatureArgs) };
}

// signedBy tells whether an authorization's signature, (v, r, s) or packed,
// recovers to its from address under the token's EIP-712 domain: the check
// the token contract makes, independent of the SDK's own.
async function signedBy(token, transfer, signatureArgs) {
  try {
    const signature = signatureArgs.length === 3
      ? serializeSignature({ v: BigInt(signatureArgs[0]), r: signatureArgs[1], s: signatureArgs[2] })
      : signatureArgs[0];
    const recovered = await recoverTypedDataAddress({
      domain: { name: token.name, version: token.version, chainId: token.chainId, verifyingContract: token.address },
      types: authorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: transfer,
      signature,
    });
    return isAddressEqual(recovered, transfer.from);
  } catch {
    return false;
  }
}

const chain = new SimulatedChain(tokens);

// tryAggregate is Multicall3's tryAggregate(false, calls) over the chain's
// views: each call's success and ABI-encoded result.
async function tryAggregate(calls) {
  const results = [];
  for (const { target, callData } of calls) {
    const token = chain.token(target);
    try {
      if (!token) throw new Reverted(`execution reverted: no contract at ${target}`);
      const { functionName, args = [] } = decodeFunctionData({ abi: tokenAbi, data: callData });
      const result = await chain.view(token, functionName, args);
      const returnData = result === undefined ? "0x" : encodeFunctionResult({ abi: tokenAbi, functionName, result });
      results.push({ success: true, returnData });
    } catch {
      results.push({ success: false, returnData: "0x" });
    }
  }
  return results;
}

// signer is the FacilitatorEvmSigner the SDK verifies and settles with,
// backed by the simulated chain.
const signer = {
  getAddresses: () => [facilitatorAddress],
  getCode: async ({ address }) => chain.code(address),
  readContract: async ({ address, functionName, args = [] }) => {
    if (isAddressEqual(address, multicall3Address) && functionName === "tryAggregate") return tryAggregate(args[1]);
    const token = chain.token(address);
    if (!token) throw new Reverted(`execution reverted: no contract at ${address}`);
    return chain.view(token, functionName, args);
  },
  writeContract: async ({ address, functionName, args = [] }) => {
    const token = chain.token(address);
    if (!token) throw new Reverted(`execution reverted: no contract at ${address}`);
    return chain.transact(token, functionName, args);
  },
  waitForTransactionReceipt: async ({ hash }) => {
    const receipt = chain.receipts.get(hash);
    if (!receipt) throw new Error(`transaction ${hash} not found on the simulated chain`);
    return receipt;
  },
  // Only ERC-6492 smart-wallet deployments send raw transactions, and no
  // deployment factory is allowed here.
  sendTransaction: async () => {
    throw new Error("the simulated chain deploys no smart wallets");
  },
  verifyTypedData: async (args) => verifyTypedData(args),
};

const facilitator = new x402Facilitator();
for (const t of tokens) facilitator.register(t.network, new ExactEvmScheme(signer));

// log is what the facilitator was asked, for GET /log.
const log = [];

// routes answer one request each: (body) -> [status, JSON value].
const routes = {
  "GET /supported": async () => [200, facilitator.getSupported()],
  "GET /log": async () => [200, log],
  "POST /verify": async (body) => {
    const { paymentPayload, paymentRequirements } = parseBody(body);
    const r = await facilitator.verify(paymentPayload, paymentRequirements);
    log.push({ op: "verify", isValid: r.isValid, reason: r.invalidReason });
    return [200, r];
  },
  "POST /settle": async (body) => {
    const { paymentPayload, paymentRequirements } = parseBody(body);
    const r = await facilitator.settle(paymentPayload, paymentRequirements);
    log.push({ op: "settle", success: r.success, reason: r.errorReason });
    return [200, r];
  },
};

// modes change how the facilitator answers, never what it checks: each
// takes the routes and returns the routes to serve. "simulated" answers
// every request at once. A further mode (a CDP-style JWT on every request, a
// fault such as a late settle or a dropped connection) is one more entry
// that wraps the routes it changes.
const modes = {
  simulated: (r) => r,
};

// maxBody bounds a request body; the SDK's payloads are a few KB.
const maxBody = 1 << 20;

// BadRequest is a request the facilitator cannot read: answered 400.
class BadRequest extends Error {}

function parseBody(body) {
  let v;
  try {
    v = JSON.parse(body || "{}");
  } catch {
    throw new BadRequest("the body is not JSON");
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new BadRequest("the body is not a JSON object");
  return v;
}

async function readBody(req) {
  let body = "";
  for await (const chunk of req) {
    body += chunk;
    if (body.length > maxBody) throw new BadRequest(`the body is larger than ${maxBody} bytes`);
  }
  return body;
}

function serve(served) {
  return http.createServer(async (req, res) => {
    const send = (status, value) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v)));
    };
    const path = new URL(req.url, "http://127.0.0.1").pathname;
    const route = served[`${req.method} ${path}`];
    if (!route) return send(404, { error: `no route ${req.method} ${path}` });
    try {
      const [status, value] = await route(await readBody(req));
      send(status, value);
    } catch (e) {
      const error = String(e).slice(0, 200);
      log.push({ op: path, error });
      send(e instanceof BadRequest ? 400 : 500, { error });
    }
  });
}

function main() {
  const modeName = process.env.X402_FACILITATOR_MODE || "simulated";
  const mode = modes[modeName];
  if (!mode) {
    console.error(`facilitator: unknown X402_FACILITATOR_MODE ${JSON.stringify(modeName)}; known: ${Object.keys(modes).join(", ")}`);
    process.exit(2);
  }
  const port = Number(process.argv[2] ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`facilitator: the port must be a number from 0 to 65535, got ${JSON.stringify(process.argv[2])}`);
    process.exit(2);
  }
  const server = serve(mode(routes));
  server.listen(port, "127.0.0.1", () => {
    console.log(`facilitator (${modeName}) on 127.0.0.1:${server.address().port}`);
  });
}

main();
