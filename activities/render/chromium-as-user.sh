#!/bin/sh
# Starts Chromium as an unprivileged user so its sandbox can work (Chromium refuses the sandbox to
# root). Spawned by Playwright as the browser's executable when gleaner runs as root (see
# browser-launch.ts); execs in place, so the pid, the process group and the pipe on fds 3 and 4
# that Playwright talks to the browser through are Chromium's own.
set -eu
uid=${CHROMIUM_RUN_AS_UID:?} gid=${CHROMIUM_RUN_AS_GID:?}
exe=${CHROMIUM_EXECUTABLE:?} setpriv=${CHROMIUM_SETPRIV:?}
unset CHROMIUM_RUN_AS_UID CHROMIUM_RUN_AS_GID CHROMIUM_EXECUTABLE CHROMIUM_SETPRIV

profile=
for arg in "$@"; do
  case $arg in --user-data-dir=*) profile=${arg#--user-data-dir=} ;; esac
done
if [ -z "$profile" ] || [ ! -d "$profile" ] || [ -L "$profile" ]; then
  echo "chromium-as-user: no profile folder (--user-data-dir) to hand to uid $uid" >&2
  exit 64
fi
# Playwright made the profile folder just now (mkdtemp, 0700, root's): the browser user owns it and
# lives in it, with no other home.
chown "$uid:$gid" "$profile"
# The pool made the browser a temp folder of its own (browser-pool.ts), removed when it is gone.
if [ -n "${TMPDIR:-}" ]; then
  if [ ! -d "$TMPDIR" ] || [ -L "$TMPDIR" ]; then
    echo "chromium-as-user: no temp folder (TMPDIR) to hand to uid $uid" >&2
    exit 64
  fi
  chown "$uid:$gid" "$TMPDIR"
fi
if ! "$setpriv" --reuid="$uid" --regid="$gid" --clear-groups test -w "$profile" -a -x "$profile"; then
  echo "chromium-as-user: uid $uid cannot reach its profile folder $profile: a parent folder is closed to it (point TMPDIR at a folder every user can traverse, such as /tmp)" >&2
  exit 65
fi
export HOME="$profile" XDG_CONFIG_HOME="$profile/.config" XDG_CACHE_HOME="$profile/.cache"
exec "$setpriv" --reuid="$uid" --regid="$gid" --clear-groups -- "$exe" "$@"
