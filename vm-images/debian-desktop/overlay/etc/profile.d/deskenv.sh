# Login shells (serial console) can reach the X session.
[ -r /run/deskenv/session.env ] && set -a && . /run/deskenv/session.env && set +a
