import type { Catalog } from '../catalog.ts'

/**
 * Portuguese, European (português de Portugal).
 * @public loaded by catalogs/index.ts with `require`, which knip does not follow
 */
export const pt: Catalog = {
  // The form page
  'page.title_error': 'Erro: {title}',
  'page.submit': 'Enviar resposta',
  'page.asked_by': 'Pedido de {sender}',
  'page.answer_by': 'Responda até {deadline}, por favor',
  'page.closes_in': 'Tempo restante para responder: {duration}.',
  'page.footer': 'A sua resposta chega apenas a quem lhe enviou esta ligação. Este formulário só aceita uma resposta.',
  'page.new_tab': '(abre num novo separador)',
  'mark.required': '(obrigatório)',
  'mark.optional': '(opcional)',

  // Errors, as a 422 page shows them
  'summary.title': 'Há um problema',
  'error.prefix': 'Erro:',
  'error.required.text': 'Escreva uma resposta',
  'error.required.textarea': 'Escreva uma resposta',
  'error.required.email': 'Indique um endereço de email',
  'error.required.number': 'Indique um número',
  'error.required.date': 'Indique uma data',
  'error.required.select': 'Selecione uma opção',
  'error.required.select_multiple': 'Selecione pelo menos uma opção',
  'error.required.file': 'Escolha um ficheiro',
  'error.unchecked': 'Assinale a caixa para continuar',
  'error.too_short': {
    one: 'Escreva pelo menos {count} carácter',
    many: 'Escreva pelo menos {count} caracteres',
    other: 'Escreva pelo menos {count} caracteres',
  },
  'error.too_long': {
    one: 'Escreva no máximo {count} carácter',
    many: 'Escreva no máximo {count} caracteres',
    other: 'Escreva no máximo {count} caracteres',
  },
  'error.too_long_by': {
    one: '{limit}. Tem {count} carácter a mais',
    many: '{limit}. Tem {count} caracteres a mais',
    other: '{limit}. Tem {count} caracteres a mais',
  },
  'answered.title': 'Já respondido: {title}',
  'error.too_small': 'Indique um número igual ou superior a {min}',
  'error.too_large': 'Indique um número igual ou inferior a {max}',
  'error.step': 'Indique um número em intervalos de {step}',
  'error.step_from': 'Indique um número em intervalos de {step}, a partir de {min}',
  'error.invalid_format': 'Escreva a resposta no formato correto',
  'error.invalid_format.text': 'Escreva a resposta numa só linha',
  'error.invalid_format.number': 'Indique um número, por exemplo, {example}',
  'error.pattern': 'Escreva a resposta no formato pedido',
  'error.email': 'Indique um endereço de email no formato correto, por exemplo name@example.com',
  'error.not_an_option': 'Selecione uma das opções',
  'error.not_unique': 'Selecione cada opção apenas uma vez',
  'error.too_few_selected': {
    one: 'Selecione pelo menos {count} opção',
    many: 'Selecione pelo menos {count} opções',
    other: 'Selecione pelo menos {count} opções',
  },
  'error.too_many_selected': {
    one: 'Selecione no máximo {count} opção',
    many: 'Selecione no máximo {count} opções',
    other: 'Selecione no máximo {count} opções',
  },
  'error.date': 'Indique uma data válida',
  'error.date_too_early': 'Escolha uma data igual ou posterior a {date}',
  'error.date_too_late': 'Escolha uma data igual ou anterior a {date}',
  'error.file_too_large': 'O ficheiro selecionado não pode ter mais de {size}',
  'error.file_type': 'O ficheiro selecionado tem de ser de um destes tipos: {types}',
  'error.control_character': 'Retire da sua resposta o carácter invisível {character}',
  'error.invalid_encoding': 'Não foi possível ler a sua resposta; escreva-a novamente',
  'error.invalid_value': 'Indique uma resposta válida',

  // Hints under a label
  'hint.min_length': {
    one: 'Pelo menos {count} carácter.',
    many: 'Pelo menos {count} caracteres.',
    other: 'Pelo menos {count} caracteres.',
  },
  'hint.max_length': {
    one: 'Até {count} carácter.',
    many: 'Até {count} caracteres.',
    other: 'Até {count} caracteres.',
  },
  'hint.length_between': {
    one: 'De {min} a {count} carácter.',
    many: 'De {min} a {count} caracteres.',
    other: 'De {min} a {count} caracteres.',
  },
  'hint.number_between': 'Um número de {min} a {max}.',
  'hint.number_min': 'Um número igual ou superior a {min}.',
  'hint.number_max': 'Um número igual ou inferior a {max}.',
  'hint.date_between': 'Uma data entre {min} e {max}.',
  'hint.date_min': 'Uma data igual ou posterior a {min}.',
  'hint.date_max': 'Uma data igual ou anterior a {max}.',
  'hint.date_on': 'Apenas o dia {date}.',
  'date.day': 'Dia',
  'date.month': 'Mês',
  'date.year': 'Ano',
  'date.example': 'Por exemplo, {example}',
  'date.missing_day': 'A data tem de incluir o dia',
  'date.missing_month': 'A data tem de incluir o mês',
  'date.missing_year': 'A data tem de incluir o ano',
  'date.missing_day_month': 'A data tem de incluir o dia e o mês',
  'date.missing_day_year': 'A data tem de incluir o dia e o ano',
  'date.missing_month_year': 'A data tem de incluir o mês e o ano',
  'date.not_real': 'Indique uma data que exista',
  'date.year_digits': 'O ano tem de ter 4 algarismos',
  'date.on': 'A data tem de ser {date}',
  'hint.file_size': 'Até {size}.',
  'hint.file_types': 'Tipos de ficheiro: {types}. Até {size}.',
  'hint.select_any': 'Selecione todas as opções aplicáveis.',
  'hint.select_at_least': {
    one: 'Selecione pelo menos {count}.',
    many: 'Selecione pelo menos {count}.',
    other: 'Selecione pelo menos {count}.',
  },
  'hint.select_at_most': {
    one: 'Selecione até {count}.',
    many: 'Selecione até {count}.',
    other: 'Selecione até {count}.',
  },
  'hint.select_exactly': { one: 'Selecione {count}.', many: 'Selecione {count}.', other: 'Selecione {count}.' },
  'hint.select_between': 'Selecione entre {min} e {max}.',

  // Controls
  'select.placeholder': 'Escolha uma opção',
  'select.no_answer': 'Sem resposta',
  'file.choose': 'Escolher ficheiro',
  'file.none': 'Nenhum ficheiro escolhido',
  'file.kept':
    'Já adicionou {name} ({size}). Será enviado com a sua resposta, a menos que o remova ou escolha outro ficheiro abaixo.',
  'file.remove': 'Remover este ficheiro',
  'file.replace': 'Não precisa de o escolher outra vez. Para enviar outro ficheiro em vez deste, escolha-o aqui.',
  'file.kind.image': 'imagens',
  'file.kind.audio': 'ficheiros de áudio',
  'file.kind.video': 'vídeos',
  'file.kind.text': 'ficheiros de texto',

  // After sending
  'receipt.title': 'Resposta enviada: {title}',
  'receipt.heading': 'A sua resposta foi enviada',
  'receipt.default_message': 'Obrigado. Não precisa de fazer mais nada; pode fechar esta página.',
  'receipt.sent_at': 'Enviada a {time}.',
  'receipt.what_you_sent': 'O que enviou',
  'receipt.not_answered': 'Sem resposta',
  'receipt.yes': 'Sim',
  'receipt.no': 'Não',
  'receipt.file': '{name} ({size})',
  'answered.heading': 'Este formulário já tem resposta',
  'answered.at': 'Foi respondido a {time}.',
  'answered.default_message': 'Não precisa de fazer mais nada; pode fechar esta página.',

  // Pages for every other outcome
  'status.answered.heading': 'Este formulário já foi respondido',
  'status.answered.message':
    'Cada formulário aceita uma só resposta, e este já a tem. O que acabou de enviar não ficou registado.',
  'status.cancelled.heading': 'Este formulário foi cancelado',
  'status.cancelled.message': 'Quem o enviou já não precisa de resposta, por isso o formulário não aceita respostas.',
  'status.expired.heading': 'Este formulário expirou',
  'status.expired.message':
    'O prazo para responder terminou, por isso o formulário já não aceita respostas. Se ainda quiser responder, peça uma nova ligação a quem o enviou.',
  'status.not_found.heading': 'Formulário não encontrado',
  'status.not_found.message':
    'Não existe nenhum formulário neste endereço. Verifique se a ligação está completa; o formulário também pode ter sido eliminado.',
  'status.cross_site.heading': 'Resposta recusada',
  'status.cross_site.message':
    'Esta resposta foi enviada a partir de outro site, por isso não foi aceite. Abra a ligação que recebeu e responda aí.',
  'status.rate_limited.heading': 'Demasiadas tentativas',
  'status.rate_limited.message':
    'Chegaram demasiadas respostas do seu endereço no último minuto. Aguarde um momento e tente novamente.',
  'status.too_large.heading': 'Demasiado grande para enviar',
  'status.too_large.message':
    'O que enviou excede o tamanho que este formulário aceita. Escolha ficheiros mais pequenos e tente novamente.',
  'status.too_large.limits': 'O ficheiro maior que cada pergunta aceita:',
  'status.too_large.file_limit': '{label}: até {size}',
  'status.too_slow.heading': 'O envio demorou demasiado',
  'status.too_slow.message':
    'A sua resposta chegou demasiado devagar e não ficou registada, talvez por a ligação à internet estar fraca. Volte ao formulário e envie-a novamente.',
  'status.busy.heading': 'Serviço ocupado de momento',
  'status.busy.message':
    'De momento, o servidor está demasiado ocupado para receber a sua resposta, por isso nada ficou registado. Volte ao formulário e envie-a novamente daqui a pouco.',
  'status.unreadable.heading': 'Resposta não compreendida',
  'status.unreadable.message':
    'Não foi possível ler o que chegou como uma resposta a este formulário. Volte ao formulário e envie a resposta a partir dele.',
  'status.error.heading': 'Ocorreu um erro',
  'status.error.message': 'A sua resposta pode não ter ficado registada. Tente novamente daqui a pouco.',
  'status.retry_after': {
    one: 'Pode tentar novamente daqui a {count} segundo.',
    many: 'Pode tentar novamente daqui a {count} segundos.',
    other: 'Pode tentar novamente daqui a {count} segundos.',
  },
  'status.back': 'Voltar ao formulário',
  'sent.heading': 'O que enviou',
  'sent.not_recorded': 'Nada do que enviou ficou registado.',
  'sent.intro': 'Veja abaixo o que enviou, para poder guardar uma cópia.',
  'sent.copy_label': 'As suas respostas em texto',
  'sent.copy_hint': 'Selecione todo o texto desta caixa e copie-o.',
  'review.title': 'Verifique as suas respostas – {title}',
  'review.heading': 'Verifique as suas respostas antes de enviar',
  'review.change': 'Alterar',
  'review.continue': 'Continuar',
  'review.send_heading': 'Envie agora a sua resposta',
  'review.send_text': 'Depois de enviada, não poderá alterar a sua resposta.',
  'review.lapsed':
    'As suas respostas não foram enviadas. As respostas à espera de verificação são guardadas durante 1 hora, e esse tempo já passou. Preencha novamente o formulário.',
  'review.lapsed_kept':
    'As suas respostas não foram enviadas. As respostas à espera de verificação são guardadas durante 1 hora, e esse tempo já passou. As suas respostas estão preenchidas abaixo: volte a adicionar os ficheiros que tiver e continue.',
}
