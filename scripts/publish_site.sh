#!/bin/sh
# Publish the troubleshooting site of one release onto the gh-pages branch with mike:
#
#   scripts/publish_site.sh VERSION [--push]      (run at the repository root; mike on PATH)
#
# VERSION is `version` in catalog/errkit.yaml. The host serves the branch at docs_url:
#   …/VERSION/…   this release, as the exceptions print its addresses (kept when the next one ships)
#   …/latest/…    an alias of the newest release; …/ redirects there (mike set-default)
#   …/404.html    the newest release's 404 page, which the host serves for every missing address
#                 at any depth: it sends an address without a version (…/errors/RA105/) to the
#                 same page of the latest release (site/overrides/404.html).
# Without --push only the local gh-pages branch changes (mike keeps the work tree untouched).
set -eu
version=${1:?usage: scripts/publish_site.sh VERSION [--push]}
push=${2:-}
config=${ERRKIT_SITE_CONFIG:-site/mkdocs.yml}
branch=gh-pages

mike deploy -F "$config" --branch "$branch" --update-aliases "$version" latest
mike set-default -F "$config" --branch "$branch" latest

# mike writes only inside version folders: put the new release's 404 page at the branch root with
# git's plumbing (a throw-away index; no checkout).
blob=$(git rev-parse --verify "$branch:$version/404.html")
index=$(mktemp -d)/index
GIT_INDEX_FILE=$index git read-tree "$branch"
GIT_INDEX_FILE=$index git update-index --add --cacheinfo "100644,$blob,404.html"
tree=$(GIT_INDEX_FILE=$index git write-tree)
rm -rf "$(dirname "$index")"
if [ "$tree" != "$(git rev-parse "$branch^{tree}")" ]; then
  commit=$(git commit-tree "$tree" -p "$branch" -m "Root 404 page from $version")
  git update-ref "refs/heads/$branch" "$commit"
fi

if [ "$push" = --push ]; then
  git push origin "$branch"
fi
