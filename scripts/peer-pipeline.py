"""The hosted peer's documented verification pipeline, in Python, for side-by-side cost comparison.

Per request: parse the body, validate with `jsonschema` (all errors), canonicalize output, schema,
rules and the defaulted request with the published RFC 8785 snippet's algorithm, hash each with
SHA-256, build the answer, canonicalize the signed document and sign it with Ed25519
(`cryptography`). No HTTP: this is the floor of that stack's per-request CPU cost.

usage: python3 peer-pipeline.py REQUEST.json [SECONDS]   -> prints verifications per CPU-second
needs: python3 with jsonschema and cryptography (Debian: python3-jsonschema python3-cryptography).
scripts/bench.sh runs it beside BenchmarkVerify.
"""
import base64, datetime, hashlib, json, sys, time, uuid
from decimal import Decimal
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
import jsonschema

def number(x):
    if isinstance(x, int): return str(x)
    if x == 0: return "0"
    sign, digits, exp = Decimal(repr(x)).as_tuple()
    raw = "".join(map(str, digits)); n = len(raw) + exp; digits = raw.rstrip("0")
    k, s = len(digits), "-" if sign else ""
    if k <= n <= 21: return s + digits + "0" * (n - k)
    if 0 < n <= 21: return s + digits[:n] + "." + digits[n:]
    if -6 < n <= 0: return s + "0." + "0" * -n + digits
    e = n - 1
    return s + digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e > 0 else "-") + str(abs(e))

def jcs(v):
    if v is None: return "null"
    if v is True: return "true"
    if v is False: return "false"
    if isinstance(v, str): return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (int, float)): return number(v)
    if isinstance(v, list): return "[" + ",".join(map(jcs, v)) + "]"
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jcs(v[k]) for k in sorted(v, key=lambda k: k.encode("utf-16-be"))) + "}"

H = lambda v: hashlib.sha256(jcs(v).encode()).hexdigest()
RULE = dict(equals_field=None, equals=None, other_field=None, value=None, in_field=None, values=None, tolerance=1e-9, if_present=False)
BOUND = dict(min=None, max=None, if_present=False)
KEY = Ed25519PrivateKey.generate()

def verify(body: bytes) -> bytes:
    req = json.loads(body)
    v = jsonschema.Draft202012Validator(req["expected_schema"])
    errors = [e.message for e in v.iter_errors(req["submitted_output"])]
    full = {"task_id": req["task_id"], "agent_id": req.get("agent_id"), "expected_schema": req["expected_schema"],
            "submitted_output": req["submitted_output"], "strict_content_check": req.get("strict_content_check", False),
            "bounds": {p: {**BOUND, **b} for p, b in req["bounds"].items()} if req.get("bounds") else None,
            "rules": [{**RULE, **r} for r in req["rules"]] if req.get("rules") else None,
            "enforce_rules": req.get("enforce_rules", False)}
    now = datetime.datetime.now(datetime.timezone.utc).isoformat()
    resp = {"result": "fail" if errors else "pass", "verification_id": str(uuid.uuid4()), "task_id": req["task_id"],
            "output_hash": H(req["submitted_output"]), "schema_hash": H(req["expected_schema"]),
            "rules_hash": H({"bounds": req.get("bounds"), "rules": req.get("rules")}), "request_hash": H(full),
            "verified_at": now, "errors": errors}
    msg = jcs({"context": "json-schema-verifier/verify-schema-attestation/v1", "algorithm": "Ed25519",
               "key_version": "bench", "attested_at": now, "response": resp}).encode()
    resp["attestation"] = {"algorithm": "Ed25519", "key_version": "bench", "timestamp": now,
                           "signature": base64.b64encode(KEY.sign(msg)).decode()}
    return json.dumps(resp).encode()

if __name__ == "__main__":
    body = open(sys.argv[1], "rb").read()
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 3
    verify(body)
    n, t0 = 0, time.process_time()
    while time.process_time() - t0 < secs:
        verify(body); n += 1
    el = time.process_time() - t0
    print(f"{n / el:.0f} verifications per CPU-second ({el / n * 1e6:.0f} us each)")
