package contract

// RecordInput is get_verification_record's arguments: the agent whose
// record is asked for (REST: the path parameter of GET /score/{agent_id}).
const RecordInput = `{"type":"object","additionalProperties":false,"required":["agent_id"],"properties":{` +
	`"agent_id":{"type":"string","minLength":1,"maxLength":200,"description":"the agent_id that verification requests named (e.g. the seller's id)"}}}`

// RecordAnswer is the signed trust record of SPEC §8.
const RecordAnswer = `{"type":"object","title":"trust record","description":"The signed trust record; the whole object is the receipt.",` +
	`"required":["record_id","agent_id","has_history","score","interval","message","next_actions","inputs","formula","recent_verdicts",` +
	`"verified_at","verifier_version","verify","attestation"],"properties":{` +
	`"record_id":{"type":"string","description":"UUIDv4 of this record"},"agent_id":{"type":"string"},` +
	`"has_history":{"type":"boolean","description":"false: no verdicts recorded, so no score"},` +
	`"score":{"type":"number","minimum":0,"maximum":100,"description":"100 × the lower bound of the interval"},` +
	`"interval":{"type":"object","required":["lower","upper","confidence"],"properties":{` +
	`"lower":{"type":"number","minimum":0,"maximum":100},"upper":{"type":"number","minimum":0,"maximum":100},"confidence":{"type":"number"}}},` +
	`"message":{"type":"string"},"next_actions":` + nextActionsSchema + `,` +
	`"inputs":{"type":"object","required":["total","passed","failed","pass_rate","recency_weighted_pass_rate","effective_n","first_seen","last_seen","evaluated_at"],"properties":{` +
	`"total":` + countSchema + `,"passed":` + countSchema + `,"failed":` + countSchema + `,` +
	`"pass_rate":{"type":"number"},"recency_weighted_pass_rate":{"type":"number"},` +
	`"weighted_passed":{"type":"number"},"weighted_failed":{"type":"number"},"effective_n":{"type":"number"},` +
	`"half_life_days":{"type":"number"},"z":{"type":"number"},` +
	`"first_seen":` + nullableString + `,"last_seen":` + nullableString + `,"evaluated_at":` + timeSchema + `}},` +
	`"formula":{"type":"string"},` +
	`"recent_verdicts":{"type":"array","items":{"type":"object","required":["verification_id","task_id","result","output_hash","overall","verified_at"],"properties":{` +
	`"verification_id":{"type":"string"},"task_id":{"type":"string"},"result":{"type":"string","enum":["pass","fail"]},` +
	`"output_hash":` + hashSchema + `,"overall":` + ratioSchema + `,"verified_at":` + timeSchema + `}}},` +
	`"log":{"type":"object","description":"the transparency log checkpoint the score was computed from (present when the service serves a log): its verdicts are among the first tree_size records","required":["origin","tree_size","root_hash"],"properties":{` +
	`"origin":{"type":"string"},"tree_size":` + countSchema + `,"root_hash":{"type":"string","description":"base64 RFC 6962 root hash"}}},` +
	`"verified_at":` + timeSchema + `,"verifier_version":{"type":"string"},` +
	`"verify":` + verifyBlockSchema + `,"attestation":` + attestationSchema + `}}`
