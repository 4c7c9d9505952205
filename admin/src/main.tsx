// The admin shell: sign-in, the navigation, light/dark, and the current page (loaded on demand).
// When the session expires the sign-in form opens over the page, which stays mounted, so a
// half-filled form survives signing in again.
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import type { ComponentType } from 'preact';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { boot, session, signIn, signOut } from './api.ts';
import { allows, match, PAGES, type PageProps } from './pages.ts';
import { navigate, useRoute } from './router.ts';
import { useStore } from './store.ts';
import { ConfirmHost, ErrorBox, Forbidden, Link, Loading, ToastHost } from './ui.tsx';

type Theme = 'light' | 'dark';
const preferred = (): Theme => (localStorage.getItem('dyn-theme') as Theme | null) ?? (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
const applyTheme = (theme: Theme) => document.documentElement.setAttribute('data-theme', theme);
applyTheme(preferred());

function SignInForm(props: { again?: boolean }) {
  const [login, setLogin] = useState(session.get().me?.login ?? '');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(login, password);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel signin" onSubmit={submit} aria-label="Sign in">
      <h1>{props.again ? 'Session expired: sign in again' : 'Sign in to dyn'}</h1>
      {props.again && <p class="muted small">Your page stays as it was; sign in to carry on.</p>}
      <label class="field">
        <span>Login</span>
        <input name="login" autoComplete="username" value={login} onInput={(e) => setLogin(e.currentTarget.value)} required autoFocus />
      </label>
      <label class="field">
        <span>Password</span>
        <input name="password" type="password" autoComplete="current-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} required />
      </label>
      <ErrorBox error={error} />
      <button class="primary" type="submit" disabled={busy}>
        Sign in
      </button>
    </form>
  );
}

function LazyPage(props: { load: () => Promise<{ default: ComponentType<PageProps> }>; rest: string[]; path: string }) {
  const [loaded, setLoaded] = useState<{ path: string; Component: ComponentType<PageProps> } | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    props.load().then(
      (mod) => live && setLoaded({ path: props.path, Component: mod.default }),
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [props.path]);
  if (error) return <ErrorBox error={error} />;
  if (!loaded || loaded.path !== props.path) return <Loading />;
  return <loaded.Component rest={props.rest} />;
}

/** A padlock beside a page the user may not open (an SVG: no emoji font needed). */
const LockIcon = () => (
  <svg class="lock" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true">
    <rect x="3" y="7" width="10" height="7" rx="1.5" fill="currentColor" />
    <path d="M5 7V5a3 3 0 0 1 6 0v2" fill="none" stroke="currentColor" stroke-width="1.6" />
  </svg>
);

function Shell() {
  const { me } = useStore(session);
  const { path } = useRoute();
  const [theme, setTheme] = useState<Theme>(preferred());
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);
  // Escape closes the menu on narrow screens, as it closes dialogs. Listened for all along: an
  // effect added once the menu opens runs after the open menu is painted, so an Escape pressed
  // right then was lost.
  useEffect(() => {
    const close = (event: KeyboardEvent) => event.key === 'Escape' && setMenuOpen(false);
    document.addEventListener('keydown', close);
    return () => document.removeEventListener('keydown', close);
  }, []);
  const landing = PAGES.find((page) => allows(page));
  // The start page is the dashboard; whoever may not see it starts on the first page they may.
  useEffect(() => {
    if (path === '/' && me && !allows(PAGES[0]!) && landing) navigate(landing.path, { replace: true });
  }, [path, me, landing]);
  const toggleTheme = () => {
    const next = theme === 'dark' ? 'light' : 'dark';
    localStorage.setItem('dyn-theme', next);
    applyTheme(next);
    setTheme(next);
  };
  const found = match(path);
  const current = found?.page;
  return (
    <div class="layout">
      <div class="topbar">
        <button class="menu-toggle" aria-label="Menu" aria-expanded={menuOpen} onClick={() => setMenuOpen(!menuOpen)}>
          ☰
        </button>
        <strong>dyn</strong>
        <span class="muted">{current?.title}</span>
      </div>
      <aside class={`sidebar${menuOpen ? ' open' : ''}`}>
        <div class="brand">
          <span>dyn admin</span>
          <button onClick={toggleTheme} aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`} title="Light / dark">
            {theme === 'dark' ? '☀' : '☾'}
          </button>
        </div>
        <nav aria-label="Main">
          {PAGES.map((page) =>
            allows(page) ? (
              <Link to={page.path} current={current === page}>
                {page.title}
              </Link>
            ) : (
              // Not a link: shown (so the user knows the page exists) but not offered.
              <span class="locked" aria-disabled="true" aria-current={current === page ? 'page' : undefined} title={`needs ${page.needs.join(' or ')}`}>
                {page.title}
                <LockIcon />
                <span class="sr-only">, needs {page.needs.join(' or ')}</span>
              </span>
            ),
          )}
        </nav>
        <div class="who">
          <div>
            Signed in as <strong>{me?.login}</strong>
          </div>
          <div class="small">{me?.permissions.join(', ') || 'no permissions'}</div>
          <button onClick={() => void signOut()}>Sign out</button>
        </div>
      </aside>
      <main id="main">
        {!found && <p>No page here. <Link to="/">Go to the dashboard</Link>.</p>}
        {found && (allows(found.page) ? <LazyPage load={found.page.load} rest={found.rest} path={path} /> : <Forbidden needs={found.page.needs} />)}
      </main>
    </div>
  );
}

function App() {
  const state = useStore(session);
  if (state.phase === 'loading') return <Loading />;
  if (state.phase === 'out') return <SignInForm />;
  return (
    <>
      <Shell />
      {state.phase === 'expired' && (
        <div class="modal-back">
          <SignInForm again />
        </div>
      )}
      <ConfirmHost />
      <ToastHost />
    </>
  );
}

render(<App />, document.getElementById('app')!);
void boot();
