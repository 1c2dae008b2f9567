#!/usr/bin/env bash
# Builds the test bed's initramfs: static busybox + the guest kernel's modules for 9p over virtio,
# soft-RoCE (rdma_rxe, rdma_cm) and virtio_net (the two-guest bed's link). The guest's userland is
# the host's / (9p, read-only); /init mounts it, adds the writable project directory at the same
# path, runs the command script (`wzcmd=` on the kernel command line) in a chroot, prints its status
# and powers off.
#   build-initramfs.sh CACHE_DIR   (expects CACHE_DIR/kroot: the unpacked linux-image package)
# Adapted from ../shared/reference/soft-roce/build-initramfs.sh; owned by scripts/rdma-testbed.
set -euo pipefail
cache=$1
kver=$(ls "$cache/kroot/lib/modules" | head -1)
kmod="$cache/kroot/lib/modules/$kver"
[[ -f "$kmod/modules.dep" ]] || depmod -b "$cache/kroot" "$kver"   # dpkg -x leaves no modules.dep
root="$cache/initramfs"
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,newroot,lib/modules}
cp /bin/busybox "$root/bin/busybox"

# The modules we want and everything they depend on, dependencies first (busybox has no modprobe).
/usr/bin/python3 - "$kmod" >"$root/modules.list" <<'PY'
import sys
deps = {}
for line in open(sys.argv[1] + "/modules.dep"):
    module, needs = line.split(":", 1)
    deps[module] = needs.split()
by_name = {m.split("/")[-1].rsplit(".ko", 1)[0]: m for m in deps}
order = []
def visit(module):
    if module in order:
        return
    for dep in deps[module]:
        visit(dep)
    order.append(module)
for want in ["virtio_pci", "9pnet_virtio", "9p", "crc32_generic", "crc32c_generic", "dummy", "virtio_net",
             "rdma_rxe", "ib_uverbs", "rdma_ucm"]:
    visit(by_name[want])
print("\n".join(m.split("/")[-1] for m in order))
PY
while read -r module; do
  cp "$(find "$kmod/kernel" -name "$module")" "$root/lib/modules/"
done <"$root/modules.list"

cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
echo /bin/false >/proc/sys/kernel/modprobe
for m in $(cat /modules.list); do insmod /lib/modules/$m 2>/dev/null || echo "WZTB: insmod $m failed"; done
arg() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
nine() { mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,$1 $2 $3; }
nine ro,cache=loose hostroot /newroot || { echo "WZTB: 9p root mount failed"; poweroff -f; }
mount -t proc proc /newroot/proc; mount -t sysfs sys /newroot/sys; mount -t devtmpfs dev /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm /newroot/dev/hugepages
mount -t devpts devpts /newroot/dev/pts; mount -t tmpfs shm /newroot/dev/shm
for d in run tmp var/tmp; do mount -t tmpfs tmpfs /newroot/$d; done
mount -t hugetlbfs none /newroot/dev/hugepages
nine rw ctl /newroot/mnt || echo "WZTB: control share mount failed"
work=$(arg wzwork)
mkdir -p "/newroot$work" 2>/dev/null; nine rw work "/newroot$work" || echo "WZTB: work share mount failed"
echo "WZTB: root ready, uptime $(cut -d' ' -f1 /proc/uptime)"
chroot /newroot /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root TERM=dumb LANG=C.UTF-8 /bin/bash /mnt/$(arg wzcmd)
echo "WZTB: command exited rc=$?, uptime $(cut -d' ' -f1 /proc/uptime)"
sync
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$cache/initramfs.cpio.gz.tmp"
mv "$cache/initramfs.cpio.gz.tmp" "$cache/initramfs.cpio.gz"
