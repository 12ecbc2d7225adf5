"""One line from `pyrgrid plan --json` (stdin, with stderr) and its exit status (argv[1]): the plan's
choices, counts, predicted time and notice, or the error; the CPU's name in messages normalized (it is the
machine's, not the planner's).  Used by methods_sweep.sh quick."""
import json
import re
import sys

text = sys.stdin.read()
rc = sys.argv[1]


def norm(s):
    return re.sub(r"cpu backend \(.*?, (\d+ threads), ", r"cpu backend (CPU, \1, ", s)


if rc != "0":
    errors = [l for l in text.splitlines() if l.startswith("pyrgrid: error")]
    print("rc=%s %s" % (rc, norm(" | ".join(errors) if errors else text.strip())))
    sys.exit(0)
plan = json.loads(text[text.index("{"):])["plan"]
c = plan["counts"]
print("%s %s kernel=%s h=%s passes=%s tasks=%s pieces=%s extent=%s result=%s slots=%s device=%s budget=%s "
      "up=%s down=%s computed=%s redundant=%s predicted=%.9g" % (
          plan["method"], plan["decomposition"], plan["kernel"], plan["height"], plan["passes"], plan["tasks_per_pass"],
          plan["pieces"], plan["piece_extent"], plan["result_extent"], plan["slots"], plan["device_bytes"],
          plan["budget_bytes"], c["uploaded"], c["downloaded"], c["computed"], c["redundant"], plan["predicted_seconds"]))
if plan.get("notice"):
    print("  notice: " + norm(plan["notice"]))
