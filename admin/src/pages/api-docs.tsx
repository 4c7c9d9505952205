import { Page } from '../ui.tsx';

export default function Stub() {
  return <Page title="api-docs">Coming soon</Page>;
}
