#!/usr/bin/env bash
# Boot a kernel under qemu with the host's / as the guest's read-only root
# (9p, the virtme way) and run a command inside; exit with its exit status.
#
# Usage: vmtest/run.sh [options] [--] [COMMAND [ARG...]]
#
#   (no COMMAND)     the smoke checks (vmtest/smoke.list) on each kernel
#   --full           everything (vmtest/full.list: the whole test suite too)
#   --ci             the smoke checks on both kernels, console only in the
#                    log files, a timing summary; per-kernel timeout 1500 s
#   COMMAND          run COMMAND ARG... in the guest, in the project dir
#   -s, --shell      an interactive shell in the guest (default kernel nsim)
#   -k, --kernel K   stock, nsim or all (default all; repeat or comma-list)
#   -b, --build DIR  the project's build dir (default build)
#   -t, --timeout S  kill the guest after S seconds (default 3600; 0: none)
#   --silence S      kill the guest when its console says nothing for S
#                    seconds (default 120; 0: never; not with --shell)
#   -m, --mem MB     guest memory (default 2048)
#   -c, --cpus N     guest CPUs (default: host CPUs, at most 4)
#   -q, --quiet      console only in the log file; show the command's output
#   --accel A        kvm, tcg or auto (default auto: KVM only when /dev/kvm
#                    is usable and the guest's own kernel, booted under KVM,
#                    prints its first console line within 20 s)
#   -h, --help
#
# Logs: BUILD/vmtest/KERNEL.log is the guest's console; BUILD/vmtest/KERNEL.out/
# holds env, cmd, status and dmesg.  Kernels are cached (vmtest/kernel.sh).
# Exit status: the guest's (with several kernels: the first non-zero one);
# 124 on timeout or a silent console; 125 when the guest never reported one
# (see the log).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() { sed -n '2,31s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }

kernels=() build=build timeout='' mem=2048 cpus='' quiet=0 shell=0 mode=smoke accel=auto silence=120
cmd=()
while [ $# -gt 0 ]; do
	case $1 in
	-s|--shell) shell=1 ;;
	--full) mode=full ;;
	--ci) mode=ci ;;
	-k|--kernel) [ $# -ge 2 ] || usage 1 >&2; IFS=, read -ra k <<<"$2"; kernels+=("${k[@]}"); shift ;;
	-b|--build) [ $# -ge 2 ] || usage 1 >&2; build=$2; shift ;;
	-t|--timeout) [ $# -ge 2 ] || usage 1 >&2; timeout=$2; shift ;;
	-m|--mem) [ $# -ge 2 ] || usage 1 >&2; mem=$2; shift ;;
	-c|--cpus) [ $# -ge 2 ] || usage 1 >&2; cpus=$2; shift ;;
	-q|--quiet) quiet=1 ;;
	--accel) [ $# -ge 2 ] || usage 1 >&2; accel=$2; shift ;;
	--silence) [ $# -ge 2 ] || usage 1 >&2; silence=$2; shift ;;
	-h|--help) usage 0 ;;
	--) shift; cmd=("$@"); break ;;
	-*) echo "vmtest: unknown option $1" >&2; usage 1 >&2 ;;
	*) cmd=("$@"); break ;;
	esac
	shift
done

[ ${#cmd[@]} -gt 0 ] && mode=cmd
[ "$shell" = 1 ] && mode=shell
if [ ${#kernels[@]} = 0 ]; then
	if [ "$mode" = shell ]; then kernels=(nsim); else kernels=(stock nsim); fi
fi
[ "${kernels[*]}" = all ] && kernels=(stock nsim)
for k in "${kernels[@]}"; do
	case $k in stock|nsim) ;; *) die "unknown kernel '$k' (stock, nsim or all)" ;; esac
done
[ "$mode" = shell ] && [ ${#kernels[@]} != 1 ] && die "--shell takes one kernel (-k stock or -k nsim)"
[ "$mode" = shell ] && ! [ -t 0 ] && die "--shell needs a terminal on stdin"
[ "$mode" = ci ] && quiet=1
if [ -z "$timeout" ]; then
	case $mode in shell) timeout=0 ;; ci) timeout=1500 ;; *) timeout=3600 ;; esac
fi
[[ $timeout =~ ^[0-9]+$ ]] || die "--timeout wants seconds"
[[ $silence =~ ^[0-9]+$ ]] || die "--silence wants seconds"
[ "$mode" = shell ] && silence=0
[ -z "$cpus" ] && { cpus=$(nproc); [ "$cpus" -gt 4 ] && cpus=4; }

need qemu-system-x86_64 qemu-system-x86
need cpio cpio; need modprobe kmod; need clang clang; need gzip gzip
# the initramfs has no libc: busybox must be the static one
busybox=/bin/busybox
[[ $(ldd "$busybox" 2>&1 || true) == *'not a dynamic'* ]] ||
	die "$busybox is not statically linked: install busybox-static ('make vm-deps')"

cd "$PROJECT_DIR"
# the guest sees the host's files at the same paths, except where it mounts
# its own file systems
for d in "$PROJECT_DIR" "$CACHE"; do
	case $d/ in
	/tmp/*|/run/*|/var/tmp/*|/proc/*|/sys/*|/dev/*)
		die "$d is under a directory the guest covers with its own mount (/tmp /run /var/tmp /proc /sys /dev)" ;;
	esac
done
[ -d "$build" ] || die "no build dir '$build' (run 'make' first)"
build=$(cd "$build" && pwd)
wd=$build/vmtest
mkdir -p "$wd"

# --- the guest's test programs (not part of the project's build) ---------
xdp_obj=$wd/xdp-test.bpf.o
if [ ! -f "$xdp_obj" ] || [ "$VMTEST_DIR/xdp-test.bpf.c" -nt "$xdp_obj" ]; then
	clang -g -O2 -target bpf -Wall -Werror -I"/usr/include/$(gcc -dumpmachine)" \
		-c "$VMTEST_DIR/xdp-test.bpf.c" -o "$xdp_obj.tmp" && mv "$xdp_obj.tmp" "$xdp_obj"
fi

# --- accelerator -----------------------------------------------------------
# KVM is used only when it really runs the guest: on some hosts /dev/kvm
# exists but every vCPU hangs, on others a boot sector runs and the real
# kernel hangs without a word.  First probe: a boot sector that writes 0x2a
# to an isa-debug-exit port, so qemu exits with (0x2a << 1) | 1 = 85 (cheap,
# and it settles the hosts where KVM runs nothing).  Second: the guest's
# own kernel must print its first console line within KVM_FIRST_LINE s.
KVM_FIRST_LINE=20
kvm_works() {
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	local img=$wd/kvm-probe.img rc=0
	{ printf '\xb0\x2a\xe6\xf4\xf4\xeb\xfd'; head -c 503 /dev/zero; printf '\x55\xaa'; } >"$img"
	timeout -k 2 5 qemu-system-x86_64 -nodefaults -no-user-config -display none \
		-accel kvm -m 16 -drive "file=$img,format=raw,if=ide" \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 </dev/null >/dev/null 2>&1 || rc=$?
	[ "$rc" = 85 ]
}
# kvm_boots KERNEL KDIR: KERNEL's kernel, booted under KVM (no initramfs:
# it panics at the root mount and qemu exits), prints its banner on the
# console within KVM_FIRST_LINE s
kvm_boots() {
	local log=$wd/kvm-probe.$1.log pid ok=1 end=$((SECONDS + KVM_FIRST_LINE))
	: >"$log"
	qemu-system-x86_64 -nodefaults -no-user-config -display none -machine pc \
		-accel kvm -cpu host -m 256 -no-reboot -kernel "$2/vmlinuz" \
		-append "console=ttyS0 earlyprintk=serial,ttyS0 panic=-1" \
		-chardev "file,id=con,path=$log" -serial chardev:con </dev/null >/dev/null 2>&1 &
	pid=$!
	qemu_pid=$pid	# for cleanup: a hung probe never ends by itself
	while [ $SECONDS -lt $end ]; do
		grep -q 'Linux version' "$log" && { ok=0; break; }
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q 'Linux version' "$log" && ok=0
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || true
	qemu_pid=
	return $ok
}
case $accel in
auto)
	if ! [ -e /dev/kvm ]; then
		accel=tcg why="no /dev/kvm"
	elif kvm_works; then
		accel=auto why=
	else
		accel=tcg why="KVM did not run a boot sector within 5 s"
	fi ;;
kvm) [ -e /dev/kvm ] || die "--accel kvm: no /dev/kvm"; why="--accel kvm" ;;
tcg) why="--accel tcg" ;;
*) die "--accel: kvm, tcg or auto" ;;
esac

# accel_for KERNEL KDIR: sets kaccel, kwhy and accel_args for this kernel
accel_for() {
	kaccel=$accel kwhy=$why
	if [ "$accel" = auto ]; then
		if kvm_boots "$1" "$2"; then
			kaccel=kvm kwhy="its kernel printed its first line under KVM"
		else
			kaccel=tcg
			kwhy="its kernel printed nothing under KVM within $KVM_FIRST_LINE s"
			kwhy+=" (log: $wd/kvm-probe.$1.log)"
		fi
	fi
	if [ "$kaccel" = kvm ]; then
		accel_args=(-accel kvm -cpu host)
	else
		accel_args=(-accel tcg,thread=multi -cpu max)
	fi
}

# wait_guest PID LOG: wait for PID (qemu, or the timeout running it); kill
# it when LOG, the guest's console, has not grown for $silence s (a guest
# that hangs says nothing; a working one prints at least guest-init's
# heartbeat).  Sets qrc to the exit status and silent=1 when it killed it.
wait_guest() {
	local pid=$1 log=$2 size last=-1 since
	since=$(date +%s)
	silent=0
	while [ "$silence" -gt 0 ] && kill -0 "$pid" 2>/dev/null; do
		size=$(stat -c %s "$log" 2>/dev/null || echo 0)
		if [ "$size" != "$last" ]; then
			last=$size since=$(date +%s)
		elif [ $(($(date +%s) - since)) -ge "$silence" ]; then
			silent=1
			kill "$pid" 2>/dev/null
			break
		fi
		sleep 1
	done
	qrc=0
	wait "$pid" || qrc=$?
}

# --- initramfs ---------------------------------------------------------------
# busybox + /init, and for the stock kernel the modules (with their
# dependencies, in load order) needed to mount the 9p root.
make_initramfs() {  # make_initramfs KERNEL KDIR OUT
	local kernel=$1 kdir=$2 out=$3 st
	st=$(mktemp -d "$wd/initramfs.XXXXXX")
	mkdir -p "$st/bin" "$st/modules"
	cp "$busybox" "$st/bin/busybox"
	cp "$VMTEST_DIR/initramfs-init" "$st/init"
	chmod 755 "$st/init"
	if [ "$kernel" = stock ]; then
		local kver m
		kver=$(cat "$kdir/kver")
		modprobe -d "$kdir" -S "$kver" --show-depends -a virtio_pci 9pnet_virtio 9p |
			awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r m; do
				cp "$m" "$st/modules/"
				basename "$m" >>"$st/modules/list"
			done
		[ -s "$st/modules/list" ] || die "stock: no modules for the 9p root found in $kdir"
	fi
	(cd "$st" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
	rm -rf "$st"
}

# --- one guest ---------------------------------------------------------------
q() { printf '%q' "$1"; }

guest_command() {  # the script the guest runs, on stdout
	echo "cd $(q "$PROJECT_DIR")"
	echo "export BUILD=$(q "$build") XTCAM_VMTEST_XDP_OBJ=$(q "$xdp_obj")"
	case $mode in
	smoke|ci) echo "exec vmtest/smoke.sh vmtest/smoke.list" ;;
	full) echo "exec vmtest/smoke.sh vmtest/full.list" ;;
	cmd) printf 'exec'; printf ' %q' "${cmd[@]}"; echo ;;
	shell) echo "true" ;;
	esac
}

qemu_pid=
tail_pid=
cleanup() {
	[ -n "$tail_pid" ] && kill "$tail_pid" 2>/dev/null
	[ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null
	[ "$shell" = 1 ] && [ -t 0 ] && stty sane 2>/dev/null
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

run_kernel() {  # run_kernel KERNEL; sets rc and secs
	local kernel=$1 kdir t0
	kdir=$("$VMTEST_DIR/kernel.sh" "$kernel")
	local log=$wd/$kernel.log res=$wd/$kernel.out initrd=$wd/$kernel.initramfs.gz lockfd
	exec {lockfd}>"$wd/$kernel.lock"
	flock -n "$lockfd" || die "$kernel: another vmtest/run.sh uses $wd/$kernel.* now"
	make_initramfs "$kernel" "$kdir" "$initrd"
	local kaccel kwhy
	accel_for "$kernel" "$kdir"
	rm -rf "$res"; mkdir -p "$res"
	: >"$log"
	{
		echo "XTCAM_VMTEST_KERNEL=$kernel"
		echo "XTCAM_VMTEST_KVER=$(q "$(cat "$kdir/kver")")"
		echo "XTCAM_VMTEST_CWD=$(q "$PROJECT_DIR")"
		echo "XTCAM_VMTEST_SHELL=$shell"
		[ "$kernel" = stock ] && echo "XTCAM_VMTEST_MODROOT=$(q "$kdir")"
		echo "XTCAM_VMTEST_TERM=$(q "${TERM:-dumb}")"
		# guest-init's heartbeat: often enough for the silence watch
		echo "XTCAM_VMTEST_HEARTBEAT=$((silence / 4))"
		if [ "$shell" = 1 ]; then
			read -r rows cols < <(stty size 2>/dev/null || echo 24 80)
			echo "XTCAM_VMTEST_ROWS=$rows XTCAM_VMTEST_COLS=$cols"
		fi
	} >"$res/env"
	guest_command >"$res/cmd"

	local append="console=ttyS0 panic=-1 mitigations=off no_timer_check rdinit=/init dummy.numdummies=0"
	append+=" xtcam_init=$VMTEST_DIR/guest-init xtcam_results=$res"
	local con
	if [ "$shell" = 1 ]; then
		con=(-chardev "stdio,id=con,mux=on,signal=off,logfile=$log"
			-serial chardev:con -mon chardev=con,mode=readline)
	elif [ "$quiet" = 1 ]; then
		con=(-chardev "file,id=con,path=$log" -serial chardev:con)
	else
		con=(-chardev "stdio,id=con,logfile=$log" -serial chardev:con)
	fi
	local qemu=(qemu-system-x86_64 -nodefaults -no-user-config -display none
		-machine pc "${accel_args[@]}" -m "$mem" -no-reboot
		# one CPU a socket: SeaBIOS's MP table (all the nsim kernel has,
		# no ACPI) lists only the first CPU of each socket
		-smp "$cpus,sockets=$cpus,cores=1,threads=1"
		-kernel "$kdir/vmlinuz" -initrd "$initrd" -append "$append"
		-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=root,mount_tag=xtcam_root
		-fsdev "local,id=res,path=$res,security_model=none,multidevs=remap"
		-device virtio-9p-pci,fsdev=res,mount_tag=xtcam_results
		"${con[@]}")
	info "$kernel: $(cat "$kdir/kver") under $kaccel ($kwhy), $cpus cpu(s), ${mem} MiB; console log $log"
	t0=$(date +%s)
	local qrc=0 silent=0
	if [ "$shell" = 1 ]; then
		"${qemu[@]}" || qrc=$?
	else
		if [ "$quiet" = 1 ]; then
			# show the guest's own output (after boot), not the kernel's
			tail -n +1 -F "$log" 2>/dev/null | sed -u -n 's/\r$//; /^vmtest: alive/d; /^vmtest: guest: /,$p' &
			tail_pid=$!
		fi
		if [ "$timeout" -gt 0 ]; then
			timeout -k 10 "$timeout" "${qemu[@]}" </dev/null &
		else
			"${qemu[@]}" </dev/null &
		fi
		qemu_pid=$!
		wait_guest "$qemu_pid" "$log"
		qemu_pid=
		if [ -n "$tail_pid" ]; then
			sleep 1; kill "$tail_pid" 2>/dev/null; wait "$tail_pid" 2>/dev/null || true
			tail_pid=
		fi
	fi
	secs=$(since "$t0")
	if [ -f "$res/status" ]; then
		rc=$(cat "$res/status")
	elif [ "$silent" = 1 ]; then
		info "$kernel: the guest's console was silent for $silence s: stopped it (under $kaccel)"
		[ "$kaccel" = kvm ] && info "$kernel: KVM may not run this guest; try --accel tcg"
		info "$kernel: last lines of $log:"
		tail -n 5 "$log" | sed 's/\r$//; s/^/    /' >&2
		rc=124
	elif [ "$qrc" = 124 ]; then
		info "$kernel: timed out after $timeout s; log: $log"
		rc=124
	else
		info "$kernel: the guest reported no exit status (qemu exit $qrc); last lines of $log:"
		tail -n 15 "$log" | sed 's/\r$//; s/^/    /' >&2
		rc=125
	fi
	info "$kernel: exit status $rc after $secs s"
	exec {lockfd}>&-
}

status=0 summary=()
for k in "${kernels[@]}"; do
	rc=0 secs=0
	run_kernel "$k"
	summary+=("$k: exit $rc in $secs s")
	[ "$status" = 0 ] && [ "$rc" != 0 ] && status=$rc
done
if [ ${#kernels[@]} -gt 1 ] || [ "$mode" = ci ]; then
	info "summary: $(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g')"
fi
exit "$status"
