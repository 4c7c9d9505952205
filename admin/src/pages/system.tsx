import { Page } from '../ui.tsx';

export default function Stub() {
  return <Page title="system">Coming soon</Page>;
}
