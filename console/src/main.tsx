import React from 'react';
import { createRoot } from 'react-dom/client';
import '@arco-design/web-react/dist/css/arco.css';
import './i18n';
import './console.css';
import { loadConfig } from './config';
import { completeSignIn, userManager } from './auth';
import { App } from './App';

// Start: read config.json, finish a sign-in redirect if this is one, then render; a
// visitor who is not signed in is sent to the provider's login page.
async function start() {
  const root = createRoot(document.getElementById('root')!);
  try {
    const config = await loadConfig();
    const um = userManager(config);
    const user = await completeSignIn(um);
    if (!user) {
      await um.signinRedirect();
      return;
    }
    root.render(
      <React.StrictMode>
        <App config={config} um={um} user={user} />
      </React.StrictMode>,
    );
  } catch (e) {
    root.render(<pre className="fatal">{String(e)}</pre>);
  }
}

void start();
