#!/bin/sh
# The same checks as linux-net-user.sh on -netdev user,impl=slirp (Debian's
# libslirp behind usernet's adapter). See linux-net.inc.sh.
exec sh "$(dirname "$0")/linux-net.inc.sh" vmm slirp
