// Package store keeps what the verifier promises to remember: every verdict
// (receipt lookup by verification id), each agent's reputation and trust
// score, the free-allowance counters per client and UTC day, and the payment
// ids already used.
//
// [Store] is the interface the service depends on; [Bolt] implements it in
// one bbolt file. A verdict is durable when [Bolt.PutVerdict] returns:
// concurrent writers share one commit instead of paying an fsync each — a
// group commit in the manner of bbolt's DB.Batch, but without its timer, so
// a lone write is not delayed and a busy store commits everything that
// queued during the previous commit at once.
//
// Free calls are counted in memory ([Bolt.ReserveAllowance]: exact, as one
// process holds the file; the others ask it, see [Shared]) and written by the next commit, whatever it
// writes: a free call and the verdict it pays for share one transaction, so
// a free verification costs one commit, and a call given back (the work
// failed) costs none.
//
//	s, err := store.OpenBolt(filepath.Join(dataDir, "verifier.db"), nil)
//	if err != nil {
//		return err // store.ErrLocked: another process has it open
//	}
//	defer s.Close()
//	err = s.PutVerdict(ctx, v)
//	rep, err := s.Reputation(ctx, v.AgentID, store.Page{Limit: 20})
//	sc, err := s.Score(ctx, v.AgentID, time.Now())
//
// # Many processes, one file
//
// bbolt lets one process at a time open a file (an flock), but a person
// runs several verifiers on one data dir: each MCP client (Claude Code,
// Cursor) starts its own stdio server, often beside `verifier --http`.
// [Shared] makes them one store. The process that holds the file lock is
// the owner: it uses the file through [Bolt] and serves the [Store]
// interface on a unix socket beside the file ([SocketName], mode 0600,
// made under a temporary name and renamed into place, so it is never
// reachable with a wider mode, in a data dir that is 0700 anyway); no TCP
// port is ever opened. Every other process is a client of that socket:
// net/rpc with gob, one call per Store method, the store's errors carried
// by name so that errors.Is finds the same sentinels ([RPCArgs],
// [RPCReply]).
//
// When the owner goes away — it exits and closes the store (it stops
// serving, waits for the calls it accepted, removes the socket, closes
// the file), or it is killed and the kernel drops its lock — its clients'
// calls fail with [ErrOwnerLost]. Each client then tries to take the lock
// (a tenth of a second per attempt) and, failing that, to connect to the
// socket, until one of them is the new owner and the others its clients
// ([SharedOptions].Wait, five seconds by default). A socket file left by
// a killed owner is replaced by the next owner: only the lock holder binds
// it, so it can be no one else's.
//
// A call whose owner went away may or may not have been applied. It is
// run again against the new owner only when running it twice is as
// running it once: reads, Check, and PutVerdict — a verdict is
// acknowledged (returns nil) only once the owner committed it and
// answered, and storing a verdict already stored is a no-op, so a retry
// after a lost answer never counts it twice. Allowance and payment calls
// are not retried: TakeAllowance would count a free call twice,
// ReserveAllowance's hold lived in the lost owner's memory only (so the
// call it held is simply not counted), and UsePayment would answer a
// retry as a replay. They fail with ErrOwnerLost, and the request fails
// before any settlement was sent, so nothing is charged; a payment whose
// UsePayment the lost owner did apply stays recorded as pending, as after
// the crash of a server that took it (a retry with it is answered from
// that state). Releasing it instead would not be safe: had the lost owner
// not applied it, another process may since have taken the same payment.
//
// When no process can have the store — a lock held by a program that
// serves no socket (another program, an older verifier), a read-only
// disk — OpenShared fails with the cause, and a stdio server verifies
// without reputation, saying so, with the cause and the fix, in every
// answer that needs the store.
//
// # PostgreSQL
//
// [Postgres] implements the same interface in a PostgreSQL database shared
// by any number of processes (replicas behind a balancer), with the same
// meaning for every operation — package storetest is the conformance suite
// both pass. A verdict, its id, its agent's counters and its log entry
// commit together (the agent's row and the log's head locked meanwhile),
// and PutVerdict returns after the commit; a process's concurrent verdicts
// share one transaction (a group commit, as on bbolt), and so do its
// concurrent free calls. A free call is an upsert that counts only while
// fewer than the limit were used, so the replicas never grant more than the
// allowance together; a payment id is a primary key. The
// schema is applied at open from the embedded pgschema/NNNN_*.sql steps,
// under an advisory lock, and recorded in schema_version; a newer version
// than the binary's is ErrSchemaVersion. Verdict records and payment values
// are stored in the bbolt encodings below, so receipts are returned byte for
// byte and [CopyToPostgres] moves a bbolt history over unchanged.
//
//	s, err := store.OpenPostgres(ctx, "postgres://verifier@db/verifier", nil)
//
// # File layout (schema version 2)
//
// Every bucket is created at open. Integers are big-endian; a "time" is Unix
// nanoseconds as a uint64 with the sign bit flipped, so keys sort by time.
//
//	meta         "schema_version" → uint64 (2); "write_probe" → int64 Unix
//	             nanos of the last write probe (see Options.ProbeInterval);
//	             "log_size" → uint64 records in the transparency log
//	verdicts     time(verified_at), verification id → 0x01, uvarint n, n
//	             bytes of the verdict's JSON without the receipt, then the
//	             receipt bytes verbatim
//	verdict_ids  verification id → time(verified_at), the rest of its
//	             verdicts key
//	agents       agent id → 56 bytes: total, passed, failed (uint64),
//	             first_seen, last_seen (int64 Unix nanos), W+, W- (float64
//	             bits; the decayed sums of the score, taken at last_seen)
//	agent_time   uint16 len(agent id), agent id, time(verified_at),
//	             verification id → result 'p' or 'f', overall.ratio (float64
//	             bits), uvarint overall.passed and overall.total, then
//	             task_id and output_hash each as uvarint length + bytes
//	allowance    UTC date "20060102", client → uint64 free calls used
//	payments     payment id → time(expiry + PaymentRetention), then (a
//	             value of 8 bytes is a payment merely used) 0x01, the state
//	             (PaymentState), since (int64 Unix nanos), the request key,
//	             the settle response and the MCP text each as uvarint
//	             length + bytes, then the kept answer verbatim
//	payment_exp  time(expiry + PaymentRetention), payment id → empty
//	log_hashes   uint64 tlog storage index → 32-byte stored hash
//	             (golang.org/x/mod/sumdb/tlog.StoredHashes)
//	log_index_by_time
//	             time(verified_at), verification id (the verdicts key) →
//	             uint64 record index in the log
//	log_entries  uint64 record index → 32-byte entry, LogEntry(receipt),
//	             then the verification id of its verdict
//
// Every stored verdict is appended to the transparency log in the
// transaction that stores it (also inside SettlePayment), so an
// acknowledged verdict has a log index and no entry lacks its verdict. A
// file written before the log has its verdicts logged at open, in key
// order; one that keeps the index by verification id (a log_index bucket)
// has it moved into log_index_by_time at open; one whose entries are bare
// 32 bytes (the ids in a log_ids bucket, or nowhere) has each entry given
// its verdict's id at open, from the index, and log_ids dropped. The index
// is keyed by time, as verdicts are, so that it appends too; the ids are in
// log_entries, not a bucket of their own, so a commit writes one page
// fewer. The PostgreSQL backend keeps the same log in the tables of
// pgschema/0002_log.sql; its log_head row is the sequencer that replicas'
// appends lock in turn.
//
// Verdicts are keyed by time, not by their random id, so that writes append:
// a write reads and rewrites the right-most pages of verdicts only, and
// pages filled once are not read again. bbolt reads the file through a
// read-only mapping, and every page it reads (with its neighbours, which
// the kernel maps around a fault) counts in the process's resident memory
// until the file is remapped; keyed by id, each verdict went to a random
// page and in time the whole file was resident. Only verdict_ids, about 90
// bytes per verdict, takes writes at random places. A receipt costs two
// lookups: its time in verdict_ids, then the record.
//
// Verdicts of test agents ([IsTestAgent]) and of no agent are in verdicts
// and verdict_ids only. Reputation and score read an agent's counters (one
// key) and walk agent_time backwards for the recent verdicts, so they cost
// O(page), not O(history). Allowance days before today and payment ids past
// their retention are deleted at open and then at most every ten minutes,
// by the allowance and payment calls.
//
// [Bolt.Verify] reads the whole file: bbolt's page check, then every
// verdict against its key, its id entry (and every id entry against its
// verdict), its index entry and its agent's counters (for tests and offline
// checks; [Bolt.Check] is the cheap readiness probe: it reports the outcome
// of the last commit, a caller's or the periodic write probe's, so a disk
// that stops taking writes shows there).
//
// Opening reads the schema version: a newer one is [ErrSchemaVersion], an
// older one is migrated step by step in the opening transaction, and a bbolt
// file with other buckets and no version is [ErrCorrupt]. Version 1 keyed
// verdicts by verification id and had no verdict_ids; opening it re-keys
// every verdict by its verified_at, records unchanged, in one transaction
// that holds about as much memory as the verdicts take on disk.
//
// # Key records
//
// Every store keeps its keys with its data ([KeyRecords], found with
// [KeyRecordsOf]): the public key of every key version that signs its
// receipts (bbolt: the signing_keys bucket; PostgreSQL: the signing_keys
// table of schema version 3), and the transparency log's identity, its
// origin and checkpoint key, recorded by the first process to serve it
// (bbolt: log_origin and log_key in meta; PostgreSQL: log_identity). A key
// version recorded with another key is [ErrKeyConflict]. [CopyToPostgres]
// carries them, and [Bolt.Verify] and [Postgres.Verify] check every receipt
// against them.
//
// # Trust score
//
// Each verdict i of an agent weighs w_i = 2^(-(T - t_i)/H) with the half-life
// H = 30 days ([HalfLife]), t_i its verified_at and T = max(now, last_seen).
// W+ and W- sum the weights of passes and fails, n = W+ + W- is the effective
// number of verdicts and p = W+/n the recency-weighted pass rate. The score is
// 100 × the lower bound L of the 95% Wilson score interval of p over n, and
// the interval is 100 × [L, U] ([Formula]). The lower bound is what makes a
// long record count: three passes today score 43.85, three thousand score
// 99.87. Because W+ and W- are kept decayed to last_seen and updated on each
// write (decay to the new time, add the new weight), a score costs O(1)
// whatever the history.
package store
