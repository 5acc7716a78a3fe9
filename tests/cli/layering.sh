#!/usr/bin/env bash
# DESIGN §1: lower layers never include higher ones. Prints every violating include.
set -u
SRC=$1/src
rank() {
  case $1 in
    util) echo 0 ;; formats) echo 1 ;; ir) echo 1 ;; ops) echo 2 ;; passes) echo 3 ;; runtime) echo 4 ;;
    codegen) echo 5 ;; backends) echo 6 ;; text|dist|science) echo 7 ;; frontends|train) echo 8 ;; models) echo 9 ;; serve) echo 10 ;; *) echo 10 ;;
  esac
}
fail=0
for dir in "$SRC"/*/; do
  layer=$(basename "$dir")
  mine=$(rank "$layer")
  while IFS=: read -r file line inc; do
    target=$(echo "$inc" | sed -E 's/.*#include "([a-z_]+)\/.*/\1/')
    [ "$target" = rlx ] && continue  # public headers
    theirs=$(rank "$target")
    if [ "$theirs" -gt "$mine" ]; then
      echo "layering: ${file#$SRC/}:$line includes $target/ (layer $layer may not depend on it)"
      fail=1
    fi
  done < <(grep -rnE '#include "[a-z_]+/' "$dir" --include='*.h' --include='*.cpp' || true)
done
[ $fail = 0 ] && echo "layering ok"
exit $fail
