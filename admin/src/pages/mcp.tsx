import { Page } from '../ui.tsx';

export default function Stub() {
  return <Page title="mcp">Coming soon</Page>;
}
