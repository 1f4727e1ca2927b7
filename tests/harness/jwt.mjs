// tests/harness/jwt.mjs - client tokens as a chat backend hands them out: HS256 JWTs signed by the
// jsonwebtoken npm package, so the daemon's verifier (daemon/src/gateway/auth/core/jwt.cpp) is checked against
// an implementation that is not ours. Used by the tests, the demo and the benchmarks.
import jwt from 'jsonwebtoken';

// signToken({ chats, sub, ttlSeconds, exp, ...claims }, secret) -> compact JWS. `exp` wins over
// `ttlSeconds` (a past exp makes an expired token); any other claim is passed through.
export function signToken({ chats = [], sub = 'test', ttlSeconds = 3600, exp, ...claims }, secret) {
	const payload = { sub, chats, exp: exp ?? Math.floor(Date.now() / 1000) + ttlSeconds, ...claims };
	return jwt.sign(payload, secret, { algorithm: 'HS256' });
}

// The secret every daemon of a test verifies with (tests/harness/daemon.sh exports it).
export const SECRET = process.env.CHAT_OUTBOXD_JWT_SECRET;

// token(chats, claims): a token for this test's daemons.
export const token = (chats, claims = {}) => signToken({ chats, ...claims }, SECRET);
