#!/bin/sh
# Installs the Debian packages flowcgi needs to build, test and run, but only
# the ones that are missing. Needs root (or sudo) only when something is
# missing; otherwise it says what to install and stops.
set -eu

# Build and run.
PKGS="gcc make pkg-config libfcgi-dev libjansson-dev liblmdb-dev libyaml-dev
libcurl4-openssl-dev libarchive-dev libxml2-dev libssl-dev libseccomp-dev
libjemalloc-dev libpq-dev libsqlite3-dev nginx-light"
# The file-making tools (engine/tools/md_exporter.c, chart.c, qrcode.c):
# Markdown with GFM tables, QR codes, PNG, PDF and SVG rendering, and a
# font for their text.
PKGS="$PKGS libcmark-gfm-dev libcmark-gfm-extensions-dev libqrencode-dev
libpng-dev libpango1.0-dev libcairo2-dev librsvg2-dev fonts-dejavu-core
fonts-wqy-microhei"
# pdf_process's pdf_to_png (engine/tools/pdf_process.c): poppler renders
# PDF pages through cairo.
PKGS="$PKGS libpoppler-glib-dev"
# Annotation batch import reads Dify's CSV (engine/knowledge/annotations.c).
PKGS="$PKGS libcsv-dev"
# Their tests: zbarimg reads the QR codes back (LibreOffice, which opens
# the DOCX, XLSX and PPTX files in t_tools_md_exporter, is too large to
# install here: that check is skipped without it).
PKGS="$PKGS zbar-tools"
# Tests and benchmarks.
PKGS="$PKGS curl jq wrk clang procps spawn-fcgi lmdb-utils unzip apache2 libapache2-mod-fcgid"
# The postgres storage backend's tests (a private server started with
# initdb and pg_ctl, tests/e2e/postgres.sh; openssl makes its keys and its
# certificate for the TLS case).
PKGS="$PKGS postgresql openssl"
# GET /metrics scraped by a real Prometheus (tests/e2e/t_metrics.sh).
PKGS="$PKGS prometheus"
# make analyze (gcc -fanalyzer comes with gcc).
PKGS="$PKGS cppcheck"
# The local sandbox and the code node's interpreters (python3-venv: pip
# into a venv inside the sandbox).
PKGS="$PKGS bubblewrap python3 python3-venv nodejs"
# The Python packages Dify apps' code nodes import most (requests, pandas,
# jieba, ...), found by code nodes in the sandbox (conf code.python_paths
# adds an admin's own).
PKGS="$PKGS python3-requests python3-httpx python3-numpy python3-pandas
python3-jinja2 python3-bs4 python3-lxml python3-yaml python3-jieba
python3-matplotlib python3-dateutil python3-tz"
# The ssh sandbox provider (client) and its tests (a private sshd on loopback).
PKGS="$PKGS openssh-client openssh-server"
# The docker sandbox provider's tests (a private dockerd; busybox-static and
# python3 make their images with docker import).
PKGS="$PKGS docker.io busybox-static"
# The admin page's browser tests (tests/browser: playwright-core from npm).
PKGS="$PKGS chromium npm"
# The document readers (engine/documents/; poppler is above): the tools
# that made the fixtures of tests/documents/ (make_fixtures.py) and the
# PDF of the documents bench, and pdftotext, the bench's reference.
PKGS="$PKGS python3-reportlab python3-docx python3-openpyxl poppler-utils"
# Outlook msg (libgsf's OLE reader), xls (libfreexl), eml (GMime), the
# charset of text that is not UTF-8 (uchardet); xlwt makes the xls fixture.
PKGS="$PKGS libgsf-1-dev libfreexl-dev libgmime-3.0-dev libuchardet-dev"
# an Outlook message's compressed RTF body (LZFu): libpst's pst_lzfu_decompress
PKGS="$PKGS libpst-dev"
PKGS="$PKGS python3-xlwt"
# Extra packages a caller asks for (FLOWCGI_EXTRA_PKGS="apache2 ...").
PKGS="$PKGS ${FLOWCGI_EXTRA_PKGS:-}"

# Runtimes a machine may already have from elsewhere (a node or python
# installed outside Debian): the command is enough, and installing Debian's
# package next to it could only conflict. node and python3 must be in /usr:
# the sandbox does not show /usr/local.
provided() {
	case $1 in
	nodejs) PATH=/usr/bin:/bin command -v node >/dev/null 2>&1 ;;
	npm) command -v npm >/dev/null 2>&1 ;;
	python3) PATH=/usr/bin:/bin command -v python3 >/dev/null 2>&1 ;;
	*) return 1 ;;
	esac
}

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = "installed" ] || provided "$p" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "flowcgi: missing Debian packages:$missing"
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		SUDO=sudo
	else
		echo "flowcgi: run as root, or install them first:" >&2
		echo "  sudo apt-get update && sudo apt-get install -y$missing" >&2
		exit 1
	fi
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
# Debian starts nginx and apache2 on port 80, sshd on port 22 and prometheus
# on port 9090 when they are installed; the tests start their own, each
# with its own configuration on free ports, and need no system one.
for svc in nginx apache2 ssh prometheus; do
	if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
		$SUDO systemctl disable --now "$svc" >/dev/null 2>&1 || true
	elif [ -x "/etc/init.d/$svc" ]; then
		$SUDO "/etc/init.d/$svc" stop >/dev/null 2>&1 || true
	fi
done
