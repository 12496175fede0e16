#!/usr/bin/env python3
"""fake_smtp.py - an SMTP server (RFC 5321) on loopback, for the email
tool's tests: no TLS, AUTH PLAIN and LOGIN.

    python3 tests/fakes/fake_smtp.py --log FILE   (prints "PORT n", serves)
        [--cert PEM --key PEM]   STARTTLS offered with that certificate
        [--ssl]                  TLS from the first byte (needs --cert)

One account: sender@example.com with password s3cret-pass (535 for any
other). A recipient whose mailbox starts with "reject" is refused (550).
Each message taken is appended to FILE as one JSON line before the 250
that ends DATA is sent: {"ehlo", "auth": {"mech", "user", "password"},
"mail_from", "rcpt": [...], "data"} where data is the message as sent,
dot-stuffing undone, lines ending in CRLF. A STARTTLS command, and a
TLS handshake the client broke off, add {"event": "starttls"} and
{"event": "tls_failed"} lines.
"""
import argparse
import base64
import json
import socketserver
import ssl
import sys

USER, PASSWORD = "sender@example.com", "s3cret-pass"
LOG = None
TLS = None      # an ssl.SSLContext when --cert is given
IMPLICIT = False


class Session(socketserver.StreamRequestHandler):
    def reply(self, line):
        self.wfile.write(line.encode() + b"\r\n")
        self.wfile.flush()

    def readline(self):
        line = self.rfile.readline(4096)
        if not line:
            raise EOFError
        return line.decode("utf-8", "replace").rstrip("\r\n")

    def event(self, what):
        with open(LOG, "a") as f:
            f.write(json.dumps({"event": what}) + "\n")

    def start_tls(self):
        """Wraps the connection; False when the handshake failed."""
        try:
            self.connection = TLS.wrap_socket(self.request, server_side=True)
        except (ssl.SSLError, OSError):
            self.event("tls_failed")
            return False
        self.rfile = self.connection.makefile("rb")
        self.wfile = self.connection.makefile("wb")
        return True

    def handle(self):
        st = {"ehlo": None, "auth": None, "mail_from": None, "rcpt": []}
        if IMPLICIT and not self.start_tls():
            return
        self.reply("220 fake.example ESMTP fake_smtp")
        try:
            while True:
                line = self.readline()
                verb = line.split(" ", 1)[0].upper()
                arg = line[len(verb):].strip()
                if verb in ("EHLO", "HELO"):
                    st["ehlo"] = arg
                    if verb == "EHLO":
                        self.reply("250-fake.example")
                        if TLS is not None and not IMPLICIT:
                            self.reply("250-STARTTLS")
                        self.reply("250-AUTH PLAIN LOGIN")
                        self.reply("250 8BITMIME")
                    else:
                        self.reply("250 fake.example")
                elif verb == "STARTTLS" and TLS is not None:
                    self.event("starttls")
                    self.reply("220 2.0.0 Ready to start TLS")
                    if not self.start_tls():
                        return
                elif verb == "AUTH":
                    self.auth(arg, st)
                elif verb == "MAIL":
                    st["mail_from"] = addr(arg)
                    st["rcpt"] = []
                    self.reply("250 OK")
                elif verb == "RCPT":
                    a = addr(arg)
                    if a.startswith("reject"):
                        self.reply("550 5.1.1 <%s>: mailbox unavailable" % a)
                    else:
                        st["rcpt"].append(a)
                        self.reply("250 OK")
                elif verb == "DATA":
                    self.data(st)
                elif verb == "RSET":
                    st["mail_from"], st["rcpt"] = None, []
                    self.reply("250 OK")
                elif verb == "NOOP":
                    self.reply("250 OK")
                elif verb == "QUIT":
                    self.reply("221 bye")
                    return
                else:
                    self.reply("502 5.5.2 unknown command")
        except (EOFError, ConnectionError, ssl.SSLError):
            return

    def auth(self, arg, st):
        parts = arg.split(" ", 1)
        mech = parts[0].upper()
        if mech == "PLAIN":
            resp = parts[1] if len(parts) > 1 else None
            if resp is None:
                self.reply("334 ")
                resp = self.readline()
            raw = base64.b64decode(resp).decode("utf-8", "replace")
            _, user, password = raw.split("\0", 2)
        elif mech == "LOGIN":
            if len(parts) > 1:
                user = base64.b64decode(parts[1]).decode()
            else:
                self.reply("334 VXNlcm5hbWU6")
                user = base64.b64decode(self.readline()).decode()
            self.reply("334 UGFzc3dvcmQ6")
            password = base64.b64decode(self.readline()).decode()
        else:
            self.reply("504 5.5.4 mechanism not supported")
            return
        st["auth"] = {"mech": mech, "user": user, "password": password}
        if user == USER and password == PASSWORD:
            self.reply("235 2.7.0 Authentication successful")
        else:
            self.reply("535 5.7.8 Authentication credentials invalid")

    def data(self, st):
        if st["mail_from"] is None or not st["rcpt"]:
            self.reply("503 5.5.1 need MAIL and RCPT first")
            return
        self.reply("354 End data with <CR><LF>.<CR><LF>")
        lines = []
        while True:
            raw = self.rfile.readline(1 << 20)
            if not raw:
                raise EOFError
            if raw == b".\r\n":
                break
            if raw.startswith(b"."):
                raw = raw[1:]
            lines.append(raw)
        rec = dict(st, data=b"".join(lines).decode("utf-8", "replace"))
        with open(LOG, "a") as f:
            f.write(json.dumps(rec) + "\n")
        self.reply("250 2.0.0 queued as fake")


def addr(arg):
    """The mailbox of "FROM:<a@b> SIZE=1" or "TO:<a@b>"."""
    s = arg.split(":", 1)[1] if ":" in arg else arg
    s = s.strip()
    if s.startswith("<"):
        s = s[1:s.index(">")]
    return s


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global LOG, TLS, IMPLICIT
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", required=True)
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--ssl", action="store_true")
    args = ap.parse_args()
    LOG = args.log
    if args.cert:
        TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        TLS.load_cert_chain(args.cert, args.key)
        IMPLICIT = args.ssl
    srv = Server(("127.0.0.1", args.port), Session)
    print("PORT %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
