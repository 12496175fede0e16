// audio.js — the chat page's voice: an answer read aloud (text-to-audio)
// and a question spoken (speech-to-text, the browser's MediaRecorder),
// each offered only where the app enables it.

import { speech, transcribe } from './api.js';

let playing = null;

// Plays the spoken answer of message id; a second call stops the first.
// Resolves when it is playing (or rejects with why it cannot).
export async function speak(id) {
  if (playing) {
    playing.pause();
    URL.revokeObjectURL(playing.src);
    playing = null;
  }
  const blob = await speech(id);
  const a = new Audio(URL.createObjectURL(blob));
  playing = a;
  a.addEventListener('ended', () => { URL.revokeObjectURL(a.src); if (playing === a) playing = null; });
  await a.play();
}

// A recorder: start() asks for the microphone and records; stop()
// resolves with the recording's text. recording() says whether it runs.
export function recorder() {
  let rec = null, parts = [];
  return {
    recording: () => rec !== null,
    async start() {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      parts = [];
      rec = new MediaRecorder(stream);
      rec.addEventListener('dataavailable', (e) => { if (e.data.size) parts.push(e.data); });
      rec.start();
    },
    stop() {
      const r = rec;
      rec = null;
      return new Promise((resolve, reject) => {
        r.addEventListener('stop', () => {
          for (const tr of r.stream.getTracks()) tr.stop();
          transcribe(new Blob(parts, { type: r.mimeType || 'audio/webm' })).then(resolve, reject);
        }, { once: true });
        r.stop();
      });
    },
  };
}
