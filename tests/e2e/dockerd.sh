#!/bin/sh
# dockerd.sh — a private Docker engine for the tests of the docker sandbox
# provider, never the system's one, and the test images it runs.
#
#	dockerd.sh start DIR [python] [tls]
#		starts dockerd with everything in DIR (socket DIR/docker.sock,
#		pid DIR/docker.pid) and imports flowcgi-test/busybox:1, plus
#		flowcgi-test/python:1 with "python"; with "tls" it also
#		listens on tcp://127.0.0.1:$(cat DIR/tcp.port) with TLS, its
#		client's ca.pem, cert.pem and key.pem in DIR/tls
#	dockerd.sh stop DIR		stops it by its pid, removes DIR
#
# The images are made with `docker import` from a root file system put
# together from what is installed here (busybox-static; python3 and the
# libraries it links), never pulled from a registry. Needs root, dockerd
# and the docker CLI (Debian: docker.io) and /bin/busybox (busybox-static):
# without them start exits 77 saying what is missing.
set -u

die() { echo "dockerd.sh: $*" >&2; exit 1; }

# rootfs DIR: a busybox root file system in DIR.
rootfs() {
	mkdir -p "$1/bin" "$1/etc" "$1/tmp" "$1/workspace" "$1/proc" \
	    "$1/dev" "$1/sys" "$1/root" || return 1
	cp /bin/busybox "$1/bin/busybox" || return 1
	for a in $(/bin/busybox --list); do
		[ -e "$1/bin/$a" ] || ln -s busybox "$1/bin/$a"
	done
	# The Agent's tool runs `bash -c`; busybox's sh stands in for it.
	printf '#!/bin/sh\nexec /bin/sh "$@"\n' >"$1/bin/bash" &&
	    chmod 755 "$1/bin/bash" || return 1
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' \
	    >"$1/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$1/etc/group"
	chmod 1777 "$1/tmp"
}

# python DIR: adds python3, its standard library and the libraries it
# links to the root file system in DIR.
python() {
	py=$(readlink -f /usr/bin/python3) || return 1
	[ -x "$py" ] || return 1
	ver=$(basename "$py")
	mkdir -p "$1/usr/bin" "$1/usr/lib"
	cp "$py" "$1/usr/bin/$ver" && ln -s "$ver" "$1/usr/bin/python3" ||
	    return 1
	# The standard library without tests, caches and site packages.
	tar -C / -cf - --exclude='__pycache__' --exclude='test' \
	    --exclude='tests' --exclude='idlelib' --exclude='tkinter' \
	    --exclude='ensurepip' --exclude='site-packages' \
	    --exclude='dist-packages' "usr/lib/$ver" | tar -C "$1" -xf - ||
	    return 1
	for lib in $(ldd "$py" "/usr/lib/$ver"/lib-dynload/*.so 2>/dev/null |
	    sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p' |
	    sort -u); do
		mkdir -p "$1$(dirname "$lib")"
		cp -L "$lib" "$1$lib" || return 1
	done
	# ld.so by the name the binaries ask for
	[ -e "$1/lib64" ] || { [ -d /lib64 ] && mkdir -p "$1/lib64" &&
	    cp -L /lib64/ld-linux-* "$1/lib64/" 2>/dev/null; }
	return 0
}

# certs DIR: a CA, a server certificate for 127.0.0.1 and a client one.
certs() {
	(cd "$1" && for n in ca server key; do
		openssl genpkey -algorithm EC -pkeyopt \
		    ec_paramgen_curve:prime256v1 -out "$n-key.pem" || exit 1
	done && mv key-key.pem key.pem &&
	openssl req -x509 -new -key ca-key.pem -subj /CN=flowcgi-test-ca \
	    -days 2 -out ca.pem &&
	openssl req -new -key server-key.pem -subj /CN=127.0.0.1 \
	    -out server.csr &&
	printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' \
	    >server.ext &&
	openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem \
	    -CAcreateserial -days 2 -extfile server.ext -out server.pem &&
	openssl req -new -key key.pem -subj /CN=flowcgi -out client.csr &&
	printf 'extendedKeyUsage=clientAuth\n' >client.ext &&
	openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem \
	    -CAcreateserial -days 2 -extfile client.ext -out cert.pem
	) >/dev/null 2>&1
}

start() {
	d=$1
	shift
	py='' tcp=''
	for a in "$@"; do
		case $a in
		python) py=1 ;;
		tls) tcp=1 ;;
		*) die "unknown option $a" ;;
		esac
	done
	[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }
	for p in dockerd docker; do
		command -v $p >/dev/null 2>&1 ||
		    { echo "$p is not installed (Debian: docker.io)"; exit 77; }
	done
	[ -x /bin/busybox ] ||
	    { echo "/bin/busybox is missing (Debian: busybox-static)"; exit 77; }
	mkdir -p "$d/data" "$d/exec" || die "cannot make $d"
	set --
	if [ -n "$tcp" ]; then
		mkdir -p "$d/tls" && certs "$d/tls" ||
		    die "cannot make the TLS certificates"
		port=$(python3 -c 'import socket; s = socket.socket();
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
		    die "no free port"
		echo "$port" >"$d/tcp.port"
		set -- -H "tcp://127.0.0.1:$port" --tlsverify \
		    --tlscacert "$d/tls/ca.pem" --tlscert "$d/tls/server.pem" \
		    --tlskey "$d/tls/server-key.pem"
	fi
	dockerd --data-root "$d/data" --exec-root "$d/exec" \
	    -H "unix://$d/docker.sock" "$@" --pidfile "$d/docker.pid" \
	    --storage-driver=vfs --iptables=false --ip-masq=false \
	    --bridge=none --log-level=warn >"$d/dockerd.log" 2>&1 &
	i=0
	until docker -H "unix://$d/docker.sock" version >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 300 ]; then
			echo "dockerd did not start:"; tail -5 "$d/dockerd.log"
			stop "$d"; exit 1
		fi
		sleep 0.1
	done
	rootfs "$d/rootfs" || die "cannot build the busybox root file system"
	tar -C "$d/rootfs" -cf - . | docker -H "unix://$d/docker.sock" \
	    import - flowcgi-test/busybox:1 >/dev/null ||
	    die "docker import of the busybox image failed"
	if [ -n "$py" ]; then
		python "$d/rootfs" || die "cannot add python3"
		tar -C "$d/rootfs" -cf - . | docker -H "unix://$d/docker.sock" \
		    import - flowcgi-test/python:1 >/dev/null ||
		    die "docker import of the python image failed"
	fi
	rm -rf "$d/rootfs"
}

stop() {
	d=$1
	pid=$(cat "$d/docker.pid" 2>/dev/null)
	if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
		i=0
		while kill -0 "$pid" 2>/dev/null; do
			i=$((i + 1))
			[ $i -eq 200 ] && kill -KILL "$pid" 2>/dev/null
			[ $i -gt 250 ] && break
			sleep 0.1
		done
	fi
	# What the engine left mounted under DIR (shm, volumes, netns).
	grep -o " $d/[^ ]*" /proc/self/mounts 2>/dev/null | sort -r |
	    while read -r m; do umount -l "$m" 2>/dev/null; done
	rm -rf "$d"
}

case "${1:-}" in
start) [ $# -ge 2 ] || die "usage: dockerd.sh start DIR [python] [tls]"
	shift; start "$@" ;;
stop) [ $# -eq 2 ] || die "usage: dockerd.sh stop DIR"; stop "$2" ;;
*) die "usage: dockerd.sh start|stop DIR" ;;
esac
