// A cron schedule in words ("every 5 minutes", "at 03:00 every day"), for the common shapes;
// anything else is shown as written.
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const pad = (n: string) => n.padStart(2, '0');

export function scheduleInWords(expression: string): string {
  const parts = expression.trim().split(/\s+/);
  const seconds = parts.length === 6 ? parts.shift()! : null;
  if (parts.length !== 5) return expression;
  const [minute, hour, dom, month, dow] = parts as [string, string, string, string, string];
  if (seconds && seconds.startsWith('*/') && minute === '*' && hour === '*') return `every ${seconds.slice(2)} seconds`;
  if (seconds && seconds !== '0') return expression;
  const rest = dom === '*' && month === '*';
  if (minute.startsWith('*/') && hour === '*' && rest && dow === '*') return `every ${minute.slice(2)} minutes`;
  if (minute === '*' && hour === '*' && rest && dow === '*') return 'every minute';
  if (/^\d+$/.test(minute) && hour === '*' && rest && dow === '*') return `every hour at minute ${minute}`;
  if (/^\d+$/.test(minute) && hour.startsWith('*/') && rest && dow === '*') return `every ${hour.slice(2)} hours at minute ${minute}`;
  if (/^\d+$/.test(minute) && /^\d+$/.test(hour)) {
    const at = `at ${pad(hour)}:${pad(minute)}`;
    if (rest && dow === '*') return `${at} every day`;
    if (rest && /^\d$/.test(dow)) return `${at} every ${DAYS[Number(dow) % 7]}`;
    if (rest && dow === '1-5') return `${at} on weekdays`;
    if (/^\d+$/.test(dom) && month === '*' && dow === '*') return `${at} on day ${dom} of every month`;
  }
  return expression;
}
