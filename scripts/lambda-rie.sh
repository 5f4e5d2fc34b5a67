#!/usr/bin/env bash
# Installs the AWS Lambda Runtime Interface Emulator (the real Lambda
# runtime API, as AWS ships it for local runs), at a pinned commit, for
# examples/serverless's TestRIELegacyElicitation; prints its path.
#   scripts/lambda-rie.sh            # into ${BATON_CACHE:-~/.cache/baton}/aws-lambda-rie
set -euo pipefail
version=v0.0.0-20261030222936-bef5c4ba774d
cache=${BATON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton}
dir="$cache/aws-lambda-rie"
if [ ! -x "$dir/aws-lambda-rie" ] || [ "$(cat "$dir/version" 2>/dev/null)" != "$version" ]; then
  mkdir -p "$dir"
  GOBIN="$dir" GOWORK=off go install "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$version" >&2
  echo "$version" >"$dir/version"
fi
echo "$dir/aws-lambda-rie"
