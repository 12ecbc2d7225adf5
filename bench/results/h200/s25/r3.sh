#!/usr/bin/env bash
# session 25: the cube-pass fit at the planner's height, the machine's NUMA layout, slabs by memory node
o=$OUT/r3; mkdir -p $o
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
{ lscpu; echo; ls /sys/devices/system/node; for n in /sys/devices/system/node/node*; do echo "$n cpus $(cat $n/cpulist)"; grep MemTotal $n/meminfo; done; nvidia-smi topo -m; 
  bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed 's/^0000//'); echo "gpu $bus numa_node $(cat /sys/bus/pci/devices/$bus/numa_node)"; } > $o/topo.txt 2>&1
mkdir -p lab/numa/root; for f in lab/numa/*.deb; do dpkg -x $f lab/numa/root; done
export LD_LIBRARY_PATH=$PWD/lab/numa/root/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
numactl=$PWD/lab/numa/root/usr/bin/numactl
$numactl -H >> $o/topo.txt 2>&1
(time bash bench/device-build.sh build-dev pyrgrid_cli) > $o/build.txt 2>&1
SWEEP_REPEAT=2 timeout 250 bash bench/sweep_gpu.sh build-dev $o/round1 > $o/round1.log 2>&1
nodes=$(ls -d /sys/devices/system/node/node* | wc -l)

gn=$(grep "numa_node" $o/topo.txt | awk '{print $NF}'); [ "$gn" -ge 0 ] 2>/dev/null || gn=0
export PYRGRID_WISDOM=$o/round1/wisdom
ini=$o/round1/heat3d_1k.ini
for mode in default local remote interleave; do
  case $mode in
    default) pre="";;
    local) pre="$numactl --cpunodebind=$gn --membind=$gn";;
    remote) [ "$nodes" -gt 1 ] || continue; other=$(( gn == 0 ? 1 : 0 )); pre="$numactl --cpunodebind=$gn --membind=$other";;
    interleave) [ "$nodes" -gt 1 ] || continue; pre="$numactl --interleave=all";;
  esac
  echo "== $mode: $pre" >> $o/numa.txt
  timeout 60 $pre build-dev/pyrgrid sweep $ini --decomposition slabs --heights 1,8,33 --passes 4 --repeat 2 >> $o/numa.txt 2>&1
  timeout 60 $pre build-dev/pyrgrid sweep $ini --set run.memory=1GiB --decomposition blocks --heights 8,32 --passes 4 --repeat 2 >> $o/numa.txt 2>&1
done
cd $OUT && tar czf r3.tgz r3 && rm -rf r3
