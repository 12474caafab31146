# mkinitramfs-modules.awk: the modules an initramfs needs, in load order
# (dependencies first), one path relative to the modules folder a line.
# Part of scripts/mkinitramfs, which documents the rules.
#
#   awk -v want="virtio_pci virtio_blk ext4" -v dir=MODULES_DIR \
#       -f mkinitramfs-modules.awk modules.dep modules.builtin \
#       modules.softdep modules.alias 'RS=\000' modules.builtin.modinfo
#
# The files are read in that order (an absent optional one as /dev/null);
# modules.builtin.modinfo holds NUL-terminated "module.key=value" strings,
# hence the RS before it. Exit 2 when a wanted module or a hard dependency
# is neither a module nor built in.

# a module's name from its path: basename, no .ko*, "-" as "_"
function norm(p) { sub(/.*\//, "", p); sub(/\.ko.*/, "", p); gsub(/-/, "_", p); return p }

# which file a line comes from, by its place among the arguments (an empty
# file has no first line, so counting first lines would skip it)
BEGIN { for (i = 1; i < ARGC; i++) index_of[ARGV[i]] = i }
FNR == 1 { file = index_of[FILENAME] }

file == 1 {    # modules.dep: "path: dep dep ..."
	p = $1; sub(/:$/, "", p)
	n = norm(p)
	path[n] = p
	d = ""
	for (i = 2; i <= NF; i++) d = d " " $i
	deps[n] = d
	next
}
file == 2 { builtin[norm($1)] = 1; next }
file == 3 {    # modules.softdep: "softdep NAME pre: A B post: C"
	if ($1 != "softdep" || $3 != "pre:") next
	n = norm($2)
	for (i = 4; i <= NF && $i !~ /^post:/; i++) {
		soft[n] = soft[n] " " $i
		soft_wanted[$i] = 1
	}
	next
}
file == 4 {    # modules.alias: "alias NAME MODULE", the candidates in file order
	if ($1 != "alias") next
	m = $3; gsub(/-/, "_", m)
	# a line "alias crypto-X M" answers a want of X as well
	if ($2 in soft_wanted) candidates[$2] = candidates[$2] " " m
	a = substr($2, 8)
	if (substr($2, 1, 7) == "crypto-" && (a in soft_wanted)) candidates[a] = candidates[a] " " m
	next
}
file == 6 {    # modules.builtin.modinfo: the built-in modules ("NAME.key=value"; some,
	       # as s390x's virtio_ccw, are missing from modules.builtin) and what
	       # they provide, by alias
	n = $0; sub(/\..*/, "", n)
	if (n != "") builtin[n] = 1
	if (sub(/^[^.]*\.alias=/, "")) builtin_alias[$0] = 1
	next
}

# a soft dependency names a module or an alias: one module for it (a
# *_generic one first: it loads on any CPU), or "" when built in
function resolve_soft(w,   n, list, k, c, pick) {
	n = norm(w)
	if ((n in path) || (n in builtin)) return n
	if ((w in builtin_alias) || (("crypto-" w) in builtin_alias)) return ""
	pick = ""
	c = split(candidates[w], list, " ")
	for (k = 1; k <= c; k++) {
		if (list[k] in builtin) return ""
		if (list[k] ~ /_generic$/) return list[k]
		if (pick == "") pick = list[k]
	}
	return pick
}

function visit(name, required,   list, k, c, s) {
	if (name in visited) return
	visited[name] = 1
	if (name in builtin) return
	if (!(name in path)) {
		if (required) {
			printf "mkinitramfs: module not found: %s (neither in modules.dep nor modules.builtin of %s)\n", \
				name, dir > "/dev/stderr"
			failed = 1
			exit 2
		}
		return
	}
	c = split(soft[name], list, " ")
	for (k = 1; k <= c; k++) {
		s = resolve_soft(list[k])
		if (s != "") visit(s, 0)
	}
	c = split(deps[name], list, " ")
	for (k = 1; k <= c; k++) visit(norm(list[k]), 1)
	order[++count] = path[name]
}

END {
	if (failed) exit 2
	c = split(want, wanted, " ")
	for (k = 1; k <= c; k++) visit(wanted[k], 1)
	for (k = 1; k <= count; k++) print order[k]
}
