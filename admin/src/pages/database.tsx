import { Page } from '../ui.tsx';

export default function Stub() {
  return <Page title="database">Coming soon</Page>;
}
