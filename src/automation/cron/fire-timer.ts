// One job's timer on this instance: sleeps until the next fire time `plan` gives (cron-schedule.ts:
// days and daylight saving), fires, and plans the one after. A fire time the timer wakes for more
// than a second late (the process was busy or suspended, the clock jumped) is skipped, not made up,
// as the README promises: a late run could overlap with the next one.

/** The first fire time after the given epoch milliseconds, or null for none. */
export type FirePlan = (after: number) => number | null;

/** How late a fire time may still run. */
const TOLERANCE_MS = 1000;
/** The longest sleep: beyond setTimeout's range, and a clock set back is noticed within it. */
const MAX_SLEEP_MS = 10 * 60_000;

export class FireTimer {
  private readonly plan: FirePlan;
  private readonly fire: (at: Date) => void;
  private next: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(plan: FirePlan, fire: (at: Date) => void) {
    this.plan = plan;
    this.fire = fire;
  }

  start(): void {
    this.next = this.plan(Date.now());
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (this.stopped || this.next === null) return;
    const delay = Math.min(Math.max(0, this.next - Date.now()), MAX_SLEEP_MS);
    this.timer = setTimeout(() => this.wake(), delay);
    this.timer.unref();
  }

  private wake(): void {
    const now = Date.now();
    // Fire times more than the tolerance ago are skipped at once, not walked one by one.
    if (this.next !== null && now - this.next > TOLERANCE_MS) this.next = this.plan(now - TOLERANCE_MS - 1);
    while (this.next !== null && this.next <= now) {
      const due = this.next;
      this.next = this.plan(due);
      // Of two fire times within the tolerance, only the later runs.
      if (this.next === null || this.next > now) this.fire(new Date(due));
    }
    this.arm();
  }
}
