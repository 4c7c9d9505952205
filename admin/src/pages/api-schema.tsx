import { Page } from '../ui.tsx';

export default function Stub() {
  return <Page title="api-schema">Coming soon</Page>;
}
