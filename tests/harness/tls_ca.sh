# tests/harness/tls_ca.sh - certificates of a test's own CA (openssl), for the TLS suites.
# Sourced after lib.sh.
#   tls_ca <name>                          a CA in $H_DIR/tls/<name>.{crt,key}
#   tls_cert <ca> <name> <san> [expired]   a server (or client) certificate of that CA in
#                                          $H_DIR/tls/<name>.{crt,key}; san like "DNS:localhost,IP:127.0.0.1";
#                                          expired: valid for one day in 2020
#   tls_redis_args <name>                  redis-server arguments: only a TLS port ($REDIS_PORT,
#                                          `port 0`) with certificate <name> of CA "ca"
TLS_DIR=""
tls_ca() {
	TLS_DIR=$H_DIR/tls
	mkdir -p "$TLS_DIR"
	openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=chat_outbox test CA $1" \
		-keyout "$TLS_DIR/$1.key" -out "$TLS_DIR/$1.crt" 2>/dev/null
}
tls_cert() {
	local ca=$1 name=$2 san=$3 expired=${4:-}
	openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" -keyout "$TLS_DIR/$name.key" \
		-out "$TLS_DIR/$name.csr" 2>/dev/null
	if [ -z "$expired" ]; then
		openssl x509 -req -in "$TLS_DIR/$name.csr" -CA "$TLS_DIR/$ca.crt" -CAkey "$TLS_DIR/$ca.key" \
			-CAcreateserial -days 30 -extfile <(printf 'subjectAltName=%s\n' "$san") \
			-out "$TLS_DIR/$name.crt" 2>/dev/null
		return
	fi
	# openssl x509 (3.0) cannot backdate a certificate: `openssl ca` can
	mkdir -p "$TLS_DIR/ca-$name"
	: >"$TLS_DIR/ca-$name/index.txt"
	cat >"$TLS_DIR/ca-$name/ca.cnf" <<CNF
[ca]
default_ca = test
[test]
database = $TLS_DIR/ca-$name/index.txt
new_certs_dir = $TLS_DIR/ca-$name
serial = $TLS_DIR/ca-$name/serial
default_md = sha256
policy = any
copy_extensions = none
x509_extensions = ext
[any]
commonName = supplied
[ext]
subjectAltName = $san
CNF
	echo 01 >"$TLS_DIR/ca-$name/serial"
	openssl ca -batch -config "$TLS_DIR/ca-$name/ca.cnf" -cert "$TLS_DIR/$ca.crt" -keyfile "$TLS_DIR/$ca.key" \
		-startdate 20200101000000Z -enddate 20200102000000Z -in "$TLS_DIR/$name.csr" \
		-out "$TLS_DIR/$name.crt" 2>/dev/null
}
tls_redis_args() {
	echo "--port 0 --tls-port $REDIS_PORT --tls-cert-file $TLS_DIR/$1.crt --tls-key-file $TLS_DIR/$1.key" \
		"--tls-ca-cert-file $TLS_DIR/ca.crt --tls-auth-clients optional"
}
