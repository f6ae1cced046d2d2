#!/bin/bash
# Installs Debian packages for a script that needs them: `scripts/apt-install.sh WHO PACKAGE...`, WHO naming
# the calling script in the messages. Needs root (CI runs as root); refreshes the package lists first.
set -euo pipefail
who=$1
shift
echo "$who: installing $* with apt-get" >&2
if [ "$(id -u)" -ne 0 ]; then
    echo "$who: $* missing, and installing needs root" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq > /dev/null
apt-get install -y -qq "$@" > /dev/null
