#!/bin/sh
# Regenerates tests/golden/java.hex with the ZooKeeper jars installed on this machine
# (Debian's zookeeper 3.8.0 package puts them in /usr/share/java).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
jars=${ZK_JARS:-/usr/share/java}
cp="$jars/zookeeper.jar:$jars/zookeeper-jute.jar:$jars/slf4j-api.jar:$jars/slf4j-nop.jar"
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
javac -d "$build" -cp "$cp" "$here/Golden.java"
java -cp "$build:$cp" Golden > "$here/../tests/golden/java.hex.tmp"
mv "$here/../tests/golden/java.hex.tmp" "$here/../tests/golden/java.hex"
echo "wrote $(wc -l < "$here/../tests/golden/java.hex") records to tests/golden/java.hex"
