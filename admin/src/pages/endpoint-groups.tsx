import { Page } from '../ui.tsx';

export default function Stub() {
  return <Page title="endpoint-groups">Coming soon</Page>;
}
