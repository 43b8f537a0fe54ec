// Small pieces every page uses: a scrolling table, an error line, a confirmation dialog and the lag chart.
import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'

export function Table({ head, children, label }: { head: ComponentChildren[]; children: ComponentChildren; label: string }) {
  return (
    <div class="scroll" role="region" aria-label={label} tabIndex={0}>
      <table>
        <thead>
          <tr>
            {head.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  )
}

export const Problem = ({ error }: { error?: Error }) =>
  error ? (
    <p class="error" role="alert">
      {error.message}
    </p>
  ) : null

export const Loading = () => (
  <p class="loading" aria-busy="true">
    Loading…
  </p>
)

/** A modal confirmation: Escape and Cancel close it, the confirm button has the focus. */
export function Confirm(props: {
  open: boolean
  title: string
  children: ComponentChildren
  confirm: string
  onConfirm: () => void
  onCancel: () => void
}) {
  const ref = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const d = ref.current
    if (!d) return
    if (props.open && !d.open) d.showModal()
    if (!props.open && d.open) d.close()
  }, [props.open])
  return (
    <dialog ref={ref} onClose={props.onCancel} aria-labelledby="confirm-title">
      <h2 id="confirm-title">{props.title}</h2>
      {props.children}
      <div class="buttons">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" autofocus onClick={props.onConfirm}>
          {props.confirm}
        </button>
      </div>
    </dialog>
  )
}

export interface Sample {
  at: number
  value: number
}

/** Lag over the last minutes as an SVG line; fixed height, so it never moves the page. */
export function LagChart({ samples, windowMs }: { samples: Sample[]; windowMs: number }) {
  const w = 600
  const h = 120
  const now = samples.at(-1)?.at ?? Date.now()
  const max = Math.max(1, ...samples.map((s) => s.value))
  const points = samples.map((s) => `${(w - ((now - s.at) / windowMs) * w).toFixed(1)},${(h - 4 - (s.value / max) * (h - 8)).toFixed(1)}`).join(' ')
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${w} ${h}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`Total lag, last ${windowMs / 60000} minutes, now ${samples.at(-1)?.value ?? 0}`}
      >
        <polyline points={points} fill="none" stroke="currentColor" stroke-width="2" vector-effect="non-scaling-stroke" />
        {samples.length === 1 && <circle cx={w - 3} cy={points.split(',')[1]} r="3" fill="currentColor" />}
      </svg>
      <figcaption>
        Total lag, last {windowMs / 60000} minutes (max {max.toLocaleString('en-US')}, sampled while this page is open)
      </figcaption>
    </figure>
  )
}
