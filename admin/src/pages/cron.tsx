import { Page } from '../ui.tsx';

export default function Stub() {
  return <Page title="cron">Coming soon</Page>;
}
