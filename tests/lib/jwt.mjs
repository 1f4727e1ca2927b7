// tests/lib/jwt.mjs - sign HS256 tokens the way a chat backend would hand them to clients.
// Used by tests, the demo and benchmarks; the daemon verifies them (daemon/src/core/jwt.*).
import { createHmac } from 'node:crypto';

const b64url = (buf) => Buffer.from(buf).toString('base64url');

// signToken({ sub, chats, ttlSeconds }, secret) -> compact JWS
export function signToken({ sub = 'test', chats = [], ttlSeconds = 3600, exp, extra = {} }, secret) {
	const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
	const claims = { sub, chats, exp: exp ?? Math.floor(Date.now() / 1000) + ttlSeconds, ...extra };
	const payload = b64url(JSON.stringify(claims));
	const sig = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
	return `${header}.${payload}.${sig}`;
}
