import { Page } from '../ui.tsx';

export default function Stub() {
  return <Page title="webhooks">Coming soon</Page>;
}
