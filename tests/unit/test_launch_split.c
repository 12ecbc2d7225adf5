/* How the CUDA stencil kernels cut a call's layers into fused launches
 * (backend/launch_split.h), checked on the host over every layer count up to
 * 400 and every depth: sizes odd (the buffers' parity), summing to the
 * layers, at most the depth (or, with a free depth, at most two more, within
 * the cap), counts as few as odd sizes of that bound allow, sizes as equal as
 * possible; with a free depth no launch of one step where a split without
 * one exists within the cap; and the cases the comment names. */
#include <stdio.h>

#include "backend/launch_split.h"
#include "check.h"

/* The fewest launches of odd sizes in [lo, hi] summing to n (0 if none), by brute force. */
static int fewest(int n, int lo, int hi)
{
    for (int c = 1; c <= n; c++) {
        if ((c ^ n) & 1) continue;        /* c odd sizes sum to n only when c and n share parity */
        if (c * lo <= n && n <= c * hi) return c;
    }
    return 0;
}

int main(void)
{
    for (int free_depth = 0; free_depth <= 1; free_depth++)
        for (int kmax = 1; kmax <= 15; kmax += 2)
            for (int kcap = kmax; kcap <= 15; kcap += 2)
                for (int n = 1; n <= 400; n++) {
                    const int count = pyr_launch_count(n, kmax, kcap, free_depth);
                    int sum = 0, kmin = 1 << 30, kbig = 0, bad = 0;
                    for (int i = 0; i < count; i++) {
                        const int k = pyr_launch_size(n, count, i);
                        if (!(k & 1) || k < 1) bad = 1;
                        sum += k;
                        if (k < kmin) kmin = k;
                        if (k > kbig) kbig = k;
                    }
                    CHECK(!bad && sum == n, "n %d kmax %d kcap %d free %d: %d launches, odd sizes summing to %d", n, kmax, kcap,
                          free_depth, count, sum);
                    CHECK(kbig - kmin <= 2, "n %d kmax %d: sizes %d..%d not as equal as possible", n, kmax, kmin, kbig);
                    const int bound = free_depth ? (kcap < kmax + 2 ? kcap : kmax + 2) : kmax;
                    CHECK(kbig <= bound, "n %d kmax %d kcap %d free %d: a launch of %d", n, kmax, kcap, free_depth, kbig);
                    if (!free_depth) {
                        CHECK(count == fewest(n, 1, kmax), "n %d kmax %d: %d launches, fewest %d", n, kmax, count, fewest(n, 1, kmax));
                    } else if (kmin == 1 && n >= 3) {
                        /* a one-step launch is left only where no split with no fewer steps per launch than
                         * three and at most two more than the depth (and the cap) has no more launches */
                        const int alt = fewest(n, 3, kmax + 2 < kcap ? kmax + 2 : kcap);
                        CHECK(alt == 0 || alt > count, "n %d kmax %d kcap %d: a launch of one step where %d launches of 3..%d do",
                              n, kmax, kcap, alt, kmax + 2 < kcap ? kmax + 2 : kcap);
                    }
                }
    /* the cases the header names, and the depth a caller chose */
    {
        const int c = pyr_launch_count(50, 3, 5, 1);
        CHECK(c == 16 && pyr_launch_size(50, c, 0) == 5 && pyr_launch_size(50, c, 15) == 3, "50 layers at 3 (free): %d launches", c);
        const int c0 = pyr_launch_count(50, 3, 5, 0);
        CHECK(c0 == 18 && pyr_launch_size(50, c0, 17) == 1, "50 layers at 3 (chosen): %d launches", c0);
        CHECK(pyr_launch_count(2, 3, 5, 1) == 2, "2 layers: two launches of one");
        CHECK(pyr_launch_count(7, 3, 5, 1) == 3 && pyr_launch_size(7, 3, 2) == 1, "7 layers at 3, cap 5: 3 + 3 + 1");
        CHECK(pyr_launch_count(50, 11, 15, 1) == 6, "50 layers at 11: six launches");
    }
    return check_report();
}
