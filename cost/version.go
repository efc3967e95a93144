package cost

// Version names the cost model's version for the result store's keys
// (record.Key.Cost): a result stored under another version was priced by
// another model, so a sweep re-plans it. Change it with every deliberate
// change of the model's predictions (when `tcpmap regress --update`
// rewrites results/cost-baseline.json).
const Version = "2026-11-26.1"
