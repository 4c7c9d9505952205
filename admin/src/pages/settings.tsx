import { Page } from '../ui.tsx';

export default function Stub() {
  return <Page title="settings">Coming soon</Page>;
}
