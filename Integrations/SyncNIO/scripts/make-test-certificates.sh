#!/usr/bin/env bash
# Makes the certificates SyncNIO's tests use, in DIR (created): a self-signed CA (ca.pem, ca.key) and,
# signed by it, server certificates with their keys:
#   server.pem   for localhost, 127.0.0.1 and ::1, valid from an hour ago for a day
#   expired.pem  for the same names, valid 2020-01-01 to 2020-01-02 only
#   otherhost.pem  for other.example only (a wrong host name for localhost)
# Needs the openssl command (OpenSSL 1.1 or 3). Keys are EC P-256 (fast to make).
set -euo pipefail
dir=${1:?usage: make-test-certificates.sh DIR}
mkdir -p "$dir"
cd "$dir"

key() { openssl ecparam -name prime256v1 -genkey -noout -out "$1" 2>/dev/null; }

key ca.key
openssl req -x509 -new -key ca.key -sha256 -days 2 -subj "/CN=SyncNIO Test CA" -out ca.pem \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

# A minimal `openssl ca` setup: it takes explicit start and end dates (an expired certificate).
mkdir -p ca.db
: >ca.db/index.txt
echo 1000 >ca.db/serial
cat >ca.cnf <<'CNF'
[ca]
default_ca = test_ca
[test_ca]
dir = ./ca.db
database = $dir/index.txt
serial = $dir/serial
new_certs_dir = $dir
certificate = ./ca.pem
private_key = ./ca.key
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
[any]
commonName = supplied
[localhost]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1,IP:::1
[otherhost]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:other.example
CNF

# sign NAME CN EXTENSIONS START END
sign() {
    key "$1.key"
    openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr" 2>/dev/null
    openssl ca -batch -config ca.cnf -extensions "$3" -startdate "$4" -enddate "$5" -notext \
        -in "$1.csr" -out "$1.pem" 2>/dev/null
}

now=$(date -u +%s)
start=$(date -u -d "@$((now - 3600))" +%Y%m%d%H%M%SZ)
end=$(date -u -d "@$((now + 86400))" +%Y%m%d%H%M%SZ)
sign server localhost localhost "$start" "$end"
sign expired localhost localhost 20200101000000Z 20200102000000Z
sign otherhost other.example otherhost "$start" "$end"
echo "certificates in $dir"
